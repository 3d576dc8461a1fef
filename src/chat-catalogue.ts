/**
 * What the service says in the chat, by language (CHAT_LANGUAGE), and the words it understands
 * back. Each text can be replaced by a variable of its own (REPLY_*, see config.ts). Texts take
 * `{name}` placeholders, filled by `fill`. Beside config.ts, in the lowest layer: the texts are
 * the defaults config starts from (and checks CHAT_LANGUAGE against); chat/ reads them from here.
 */
export const LANGUAGES = ['en', 'pt', 'es'] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * Every kind of reply the service sends in the chat (CHAT_REPLY_KINDS switches each on or off).
 * Since Meta bills every reply (docs/operations.md, "What replies cost"), the default sends only
 * what a person cannot learn elsewhere: the question and what to answer it with, "signed in"
 * with its undo hint (how a phished code comes to light), why a code or an answer did nothing,
 * the STOP receipt, why a sender is refused, that the account is blocked, and the answers to the
 * person's own commands (HELP, SESSIONS, DELETE: asked for, so always wanted). Off by default:
 * `denied` (the app shows it).
 */
export const REPLY_KINDS = [
  'confirm',
  'which-one',
  'signed-in',
  'unknown-code',
  'denied',
  'nothing-to-confirm',
  'signed-out',
  'cannot-sign-in',
  'slow-down',
  'country-not-served',
  'blocked',
  'help',
  'sessions',
  'erase-confirm',
  'erased',
  'nothing-to-erase',
  'no-account',
] as const;
export type ReplyKind = (typeof REPLY_KINDS)[number];
/** every kind but `denied`: after a NO the app says so, and a Cloud API reply is billed (docs/configuration.md, CHAT_REPLY_KINDS) */
export const DEFAULT_REPLY_KINDS: readonly ReplyKind[] = REPLY_KINDS.filter((k) => k !== 'denied');

export interface ChatTexts {
  /** after a login; the undo hint follows it */
  signedIn: string;
  /** how to undo a login; sent after every login ({app}) */
  undoHint: string;
  unknownCode: string;
  /** the confirmation question ({app}, {device}, {place}, {time}, {number}: what YES / NO name it by) */
  confirm: string;
  /** a bare YES / NO while several questions are open ({count}, {list}: number, device, place, time of each; {example}) */
  whichOne: string;
  /** after NO */
  denied: string;
  /** YES or NO with no question waiting for it */
  nothingToConfirm: string;
  /** after STOP ({count}) */
  signedOut: string;
  /** to a code from a sender the gateway did not identify (no phone, LID or user id): why nothing happens ({app}) */
  cannotSignIn: string;
  /** to a sender past SENDER_MESSAGES_PER_MINUTE, once a minute: their messages do nothing for now ({app}) */
  slowDown: string;
  /** to a sender whose country SENDER_COUNTRIES_ALLOW / _DENY refuses: nobody is signed in ({app}) */
  countryNotServed: string;
  /** to a sender whose account an operator blocked: nobody was signed in ({app}) */
  blocked: string;
  /** the question's reply buttons where the gateway shows them (Cloud API; at most 20 characters each) */
  yesButton: string;
  noButton: string;
  /** heads a user's /send-message: who sent it, and that the service did not ({sender}, {app}) */
  relayed: string;
  /** after HELP: the commands the chat understands, in this language's words ({app}) */
  help: string;
  /** after SESSIONS: where the person is signed in ({app}, {count}, {list}: the items below, `; `-separated) */
  sessions: string;
  /** after SESSIONS with nothing open ({app}) */
  noSessions: string;
  /** one app session in the SESSIONS list ({device}, {place}, {time}: last used) */
  sessionItem: string;
  /** one OpenID login in the SESSIONS list ({client}: the app's name, {device}, {place}, {time}: last used) */
  oidcItem: string;
  /** after DELETE: the numbered confirmation ({app}, {number}, {minutes}) */
  eraseConfirm: string;
  /** after the matching DELETE <number>: the account is gone ({app}) */
  erased: string;
  /** DELETE <number> with no deletion waiting for that number ({app}) */
  nothingToErase: string;
  /** DELETE from a blocked account: only an operator erases it ({app}) */
  eraseBlocked: string;
  /** SESSIONS or DELETE from a sender no account belongs to ({app}) */
  noAccount: string;
}

export const CATALOGUE: Record<Language, ChatTexts> = {
  en: {
    signedIn: "You're signed in to {app}.",
    undoHint: 'Not you? Reply STOP to sign out everywhere.',
    unknownCode: 'That code is unknown or has expired. Please request a new one in the app.',
    confirm: "Sign in to {app} on {device}, {place}, {time}? Reply YES {number} to sign in, NO {number} if this wasn't you.",
    whichOne: '{count} sign-ins to {app} are waiting for your answer: {list}. Reply YES or NO with the number of the one you mean, e.g. YES {example}.',
    denied:
      'OK, nobody was signed in. If you did not ask for this, someone may be trying to get into your account: ' +
      'never send a code you were given by someone else.',
    nothingToConfirm: 'There is no sign-in waiting for your answer (it may have expired). Please start again in the app.',
    signedOut: 'Done: you are signed out of {app} everywhere ({count} sessions ended).',
    cannotSignIn: 'WhatsApp did not tell {app} who sent this message, so it cannot sign you in from this chat. Please sign in another way.',
    slowDown: 'You are sending {app} messages too fast, so they are ignored for now. Please wait a minute and try again.',
    countryNotServed: '{app} does not sign in WhatsApp accounts from your country, so nobody was signed in. Please sign in another way.',
    blocked: 'Your {app} account is blocked, so nobody was signed in. Please contact {app} support if you think this is a mistake.',
    yesButton: 'Yes, sign in',
    noButton: 'No, not me',
    relayed: 'Message from {sender}, sent through {app}. It is not from {app}: {app} never asks you to send a code or to reply YES for someone else.',
    help:
      '{app} understands these messages: the code the app shows you (to sign in), SESSIONS (where you are signed in), STOP (sign out everywhere), ' +
      'DELETE (erase your account and everything {app} keeps about you), HELP (this list).',
    sessions: 'Where you are signed in to {app} ({count}): {list}. Reply STOP to sign out everywhere.',
    noSessions: 'You are not signed in to {app} anywhere.',
    sessionItem: '{device}, {place}, last used {time}',
    oidcItem: '{client} on {device}, {place}, last used {time}',
    eraseConfirm:
      'Reply DELETE {number} within {minutes} minutes to erase your {app} account and everything {app} keeps about you. This cannot be undone. ' +
      'To keep your account, do nothing.',
    erased: 'Done: your {app} account and everything {app} kept about you are erased. If you send a code again, a new account is made.',
    nothingToErase: 'Nothing was erased: no deletion is waiting for that number (it may have expired). Reply DELETE to get a new number.',
    eraseBlocked: 'Your {app} account is blocked, so it cannot be erased from the chat. Please contact {app} support to have it erased.',
    noAccount: '{app} has no account linked to this WhatsApp chat, so there is nothing to show or erase.',
  },
  pt: {
    signedIn: 'Você entrou no {app}.',
    undoHint: 'Não foi você? Responda PARAR para sair de todos os aparelhos.',
    unknownCode: 'Esse código é desconhecido ou expirou. Peça um novo no aplicativo.',
    confirm: 'Entrar no {app} em {device}, {place}, {time}? Responda SIM {number} para entrar, NÃO {number} se não foi você.',
    whichOne: '{count} entradas no {app} esperam sua resposta: {list}. Responda SIM ou NÃO com o número da que você quer dizer, por exemplo SIM {example}.',
    denied:
      'Certo, ninguém entrou. Se não foi você que pediu, alguém pode estar tentando acessar sua conta: nunca envie um código que outra pessoa lhe passou.',
    nothingToConfirm: 'Não há nenhuma entrada esperando sua resposta (pode ter expirado). Comece de novo no aplicativo.',
    signedOut: 'Pronto: você saiu do {app} em todos os aparelhos ({count} sessões encerradas).',
    cannotSignIn: 'O WhatsApp não informou ao {app} quem enviou esta mensagem, então não é possível entrar por esta conversa. Entre de outra forma.',
    slowDown: 'Você está enviando mensagens ao {app} rápido demais, por isso elas estão sendo ignoradas. Espere um minuto e tente de novo.',
    countryNotServed: 'O {app} não aceita entradas de contas do WhatsApp do seu país, então ninguém entrou. Entre de outra forma.',
    blocked: 'Sua conta no {app} está bloqueada, então ninguém entrou. Fale com o suporte do {app} se achar que é um engano.',
    yesButton: 'Sim, entrar',
    noButton: 'Não fui eu',
    relayed: 'Mensagem de {sender}, enviada pelo {app}. Ela não é do {app}: o {app} nunca pede que você envie um código ou responda SIM para outra pessoa.',
    help:
      'O {app} entende estas mensagens: o código que o aplicativo mostra (para entrar), SESSÕES (onde você está conectado), ' +
      'PARAR (sair de todos os aparelhos), APAGAR (apagar sua conta e tudo o que o {app} guarda sobre você), AJUDA (esta lista).',
    sessions: 'Onde você está conectado no {app} ({count}): {list}. Responda PARAR para sair de todos os aparelhos.',
    noSessions: 'Você não está conectado no {app} em nenhum aparelho.',
    sessionItem: '{device}, {place}, último uso {time}',
    oidcItem: '{client} em {device}, {place}, último uso {time}',
    eraseConfirm:
      'Responda APAGAR {number} em até {minutes} minutos para apagar sua conta do {app} e tudo o que o {app} guarda sobre você. Isso não pode ser desfeito. ' +
      'Para manter sua conta, não faça nada.',
    erased: 'Pronto: sua conta do {app} e tudo o que o {app} guardava sobre você foram apagados. Se você enviar um código de novo, uma conta nova será criada.',
    nothingToErase: 'Nada foi apagado: nenhuma exclusão espera esse número (pode ter expirado). Responda APAGAR para receber um número novo.',
    eraseBlocked: 'Sua conta do {app} está bloqueada, então não pode ser apagada por esta conversa. Fale com o suporte do {app} para apagá-la.',
    noAccount: 'O {app} não tem nenhuma conta ligada a esta conversa do WhatsApp, então não há nada para mostrar ou apagar.',
  },
  es: {
    signedIn: 'Has iniciado sesión en {app}.',
    undoHint: '¿No fuiste tú? Responde STOP para cerrar sesión en todas partes.',
    unknownCode: 'Ese código es desconocido o ha caducado. Pide uno nuevo en la aplicación.',
    confirm: '¿Iniciar sesión en {app} en {device}, {place}, {time}? Responde SÍ {number} para entrar, NO {number} si no fuiste tú.',
    whichOne:
      '{count} inicios de sesión en {app} esperan tu respuesta: {list}. Responde SÍ o NO con el número del que quieres decir, por ejemplo SÍ {example}.',
    denied:
      'De acuerdo, nadie ha iniciado sesión. Si no lo pediste tú, alguien puede estar intentando entrar en tu cuenta: ' +
      'nunca envíes un código que te haya dado otra persona.',
    nothingToConfirm: 'No hay ningún inicio de sesión esperando tu respuesta (puede haber caducado). Vuelve a empezar en la aplicación.',
    signedOut: 'Hecho: has cerrado sesión en {app} en todas partes ({count} sesiones cerradas).',
    cannotSignIn: 'WhatsApp no le indicó a {app} quién envió este mensaje, así que no puede iniciar tu sesión desde este chat. Inicia sesión de otra forma.',
    slowDown: 'Estás enviando mensajes a {app} demasiado rápido, así que se ignoran por ahora. Espera un minuto y vuelve a intentarlo.',
    countryNotServed: '{app} no inicia sesión con cuentas de WhatsApp de tu país, así que nadie ha iniciado sesión. Inicia sesión de otra forma.',
    blocked: 'Tu cuenta de {app} está bloqueada, así que nadie ha iniciado sesión. Contacta con el soporte de {app} si crees que es un error.',
    yesButton: 'Sí, entrar',
    noButton: 'No fui yo',
    relayed: 'Mensaje de {sender}, enviado a través de {app}. No es de {app}: {app} nunca te pide que envíes un código ni que respondas SÍ por otra persona.',
    help:
      '{app} entiende estos mensajes: el código que te muestra la aplicación (para iniciar sesión), SESIONES (dónde tienes la sesión iniciada), ' +
      'STOP (cerrar sesión en todas partes), BORRAR (borrar tu cuenta y todo lo que {app} guarda sobre ti), AYUDA (esta lista).',
    sessions: 'Dónde tienes la sesión iniciada en {app} ({count}): {list}. Responde STOP para cerrar sesión en todas partes.',
    noSessions: 'No tienes la sesión iniciada en {app} en ningún sitio.',
    sessionItem: '{device}, {place}, último uso {time}',
    oidcItem: '{client} en {device}, {place}, último uso {time}',
    eraseConfirm:
      'Responde BORRAR {number} en los próximos {minutes} minutos para borrar tu cuenta de {app} y todo lo que {app} guarda sobre ti. No se puede deshacer. ' +
      'Para conservar tu cuenta, no hagas nada.',
    erased: 'Hecho: tu cuenta de {app} y todo lo que {app} guardaba sobre ti se han borrado. Si vuelves a enviar un código, se creará una cuenta nueva.',
    nothingToErase: 'No se ha borrado nada: ningún borrado espera ese número (puede haber caducado). Responde BORRAR para recibir un número nuevo.',
    eraseBlocked: 'Tu cuenta de {app} está bloqueada, así que no se puede borrar desde este chat. Contacta con el soporte de {app} para que la borren.',
    noAccount: '{app} no tiene ninguna cuenta vinculada a este chat de WhatsApp, así que no hay nada que mostrar ni borrar.',
  },
};

/**
 * Answers and commands understood in every language (a person may answer in English whatever the setting),
 * compared after `answerWord` folds case, accents and surrounding punctuation. Digits: 1 = yes,
 * 2 = no, as the question's numbered options.
 */
export const ANSWERS = {
  yes: ['yes', 'y', '1', 'sim', 's', 'si', 'ok', 'confirm', 'confirmar'],
  no: ['no', 'n', '2', 'nao', 'não'],
  stop: ['stop', 'parar', 'pare', 'sair', 'detener', 'stopp'],
  /** the person's own commands (docs/accounts.md, "In the chat"); DELETE also as "DELETE 42", its confirmation */
  help: ['help', 'ajuda', 'ayuda', 'menu', 'commands', 'comandos'],
  sessions: ['sessions', 'session', 'devices', 'sessoes', 'sessao', 'aparelhos', 'dispositivos', 'sesiones', 'sesion'],
  delete: ['delete', 'erase', 'apagar', 'excluir', 'borrar', 'eliminar'],
} as const;

export function fill(template: string, vars: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}
