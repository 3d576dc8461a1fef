import { LANGUAGES, type Language } from '../chat-catalogue.js';

/**
 * The login page's words, in the chat's languages (src/chat-catalogue.ts): the person reads the
 * page in the language their browser asks for (`Accept-Language`), else in the chat's
 * (CHAT_LANGUAGE). `{name}` placeholders are filled by `fillText`. The page's script gets the
 * `ScriptTexts` of its language in the page's data (src/demo/browser/ has no dictionary).
 */
export const PAGE_LANGUAGES = LANGUAGES;
export type PageLanguage = Language;

/** What the script says as a code goes on (src/demo/browser/view.ts, main.ts, flows.ts). */
export interface ScriptTexts {
  starting: string;
  renewing: string;
  waiting: string;
  awaitingConfirmation: string;
  signedIn: string;
  redirecting: string;
  expired: string;
  denied: string;
  failed: string;
  /** a new code in place of an expired one */
  renewed: string;
  /** {reason} */
  cannotStart: string;
  /** the OpenID interaction can't go on ({reason}: the provider's, technical) */
  cannotContinue: string;
  /** the WhatsApp button's accessible name ({text}: the message) */
  openWhatsAppWith: string;
}

export interface PageTexts extends ScriptTexts {
  title: string;
  /** the OpenID interaction's title ({name}: the app's) */
  titleFor: string;
  sendThisCode: string;
  openWhatsApp: string;
  /** under the code, wide screens (the QR code beside it) */
  hintQr: string;
  /** under the code, phones (no QR code: the button opens WhatsApp on this phone) */
  hintPhone: string;
  /** {number}: the service's WhatsApp number, as text */
  writeTo: string;
  /** {time}: m:ss */
  validFor: string;
  getNewCode: string;
  /** {name} */
  backTo: string;
  qrAlt: string;
  /** {who} */
  signedInAs: string;
  name: string;
  surname: string;
  phone: string;
  roles: string;
  signOut: string;
  footer: string;
}

export const PAGE_TEXTS: Record<PageLanguage, PageTexts> = {
  en: {
    title: 'Sign in with WhatsApp',
    titleFor: 'Sign in to {name} with WhatsApp',
    sendThisCode: 'Send this code to us on WhatsApp',
    openWhatsApp: 'Open WhatsApp',
    hintQr: "Scan the QR code with your phone's camera, or open WhatsApp here with the button: the message is typed in. Just press send.",
    hintPhone: 'Tap the button: WhatsApp opens with the message typed in. Just press send.',
    writeTo: 'Our WhatsApp number: {number}',
    validFor: 'The code is valid for {time}.',
    getNewCode: 'Get a new code',
    backTo: 'Back to {name}',
    qrAlt: 'QR code that opens WhatsApp with the message typed in',
    signedInAs: 'Signed in as {who}',
    name: 'Name',
    surname: 'Surname',
    phone: 'Phone',
    roles: 'Roles',
    signOut: 'Sign out',
    footer: 'Signing in with a chat message: no password, no SMS code.',
    starting: 'Preparing a code…',
    renewing: 'That code expired. Getting a new one…',
    waiting: 'Waiting for your message…',
    awaitingConfirmation: 'Message received. Please confirm the sign-in in WhatsApp.',
    signedIn: 'Signed in.',
    redirecting: 'Signed in. Taking you back…',
    expired: 'This code has expired. Get a new code to try again.',
    denied: 'The sign-in was declined in WhatsApp.',
    failed: 'The sign-in could not be completed. Get a new code to try again.',
    renewed: 'That code expired; this is a new one. Waiting for your message…',
    cannotStart: 'Could not start a sign-in: {reason}',
    cannotContinue: "This sign-in can't go on here: please start again from the app. ({reason})",
    openWhatsAppWith: 'Open WhatsApp with the message {text} typed in',
  },
  pt: {
    title: 'Entrar com o WhatsApp',
    titleFor: 'Entrar no {name} com o WhatsApp',
    sendThisCode: 'Envie este código para nós no WhatsApp',
    openWhatsApp: 'Abrir o WhatsApp',
    hintQr: 'Aponte a câmera do celular para o código QR, ou abra o WhatsApp aqui com o botão: a mensagem já vem escrita. É só enviar.',
    hintPhone: 'Toque no botão: o WhatsApp abre com a mensagem já escrita. É só enviar.',
    writeTo: 'Nosso número do WhatsApp: {number}',
    validFor: 'O código vale por {time}.',
    getNewCode: 'Gerar um novo código',
    backTo: 'Voltar para {name}',
    qrAlt: 'Código QR que abre o WhatsApp com a mensagem já escrita',
    signedInAs: 'Você entrou como {who}',
    name: 'Nome',
    surname: 'Sobrenome',
    phone: 'Telefone',
    roles: 'Funções',
    signOut: 'Sair',
    footer: 'Entrar com uma mensagem no chat: sem senha, sem código por SMS.',
    starting: 'Preparando um código…',
    renewing: 'Esse código expirou. Gerando um novo…',
    waiting: 'Aguardando a sua mensagem…',
    awaitingConfirmation: 'Mensagem recebida. Confirme a entrada no WhatsApp.',
    signedIn: 'Você entrou.',
    redirecting: 'Você entrou. Voltando…',
    expired: 'Este código expirou. Gere um novo código para tentar de novo.',
    denied: 'A entrada foi recusada no WhatsApp.',
    failed: 'Não foi possível concluir a entrada. Gere um novo código para tentar de novo.',
    renewed: 'Esse código expirou; este é um novo. Aguardando a sua mensagem…',
    cannotStart: 'Não foi possível começar a entrada: {reason}',
    cannotContinue: 'Esta entrada não pode continuar aqui: comece de novo pelo aplicativo. ({reason})',
    openWhatsAppWith: 'Abrir o WhatsApp com a mensagem {text} já escrita',
  },
  es: {
    title: 'Iniciar sesión con WhatsApp',
    titleFor: 'Iniciar sesión en {name} con WhatsApp',
    sendThisCode: 'Envíanos este código por WhatsApp',
    openWhatsApp: 'Abrir WhatsApp',
    hintQr: 'Escanea el código QR con la cámara del móvil, o abre WhatsApp aquí con el botón: el mensaje ya va escrito. Solo tienes que enviarlo.',
    hintPhone: 'Toca el botón: WhatsApp se abre con el mensaje ya escrito. Solo tienes que enviarlo.',
    writeTo: 'Nuestro número de WhatsApp: {number}',
    validFor: 'El código es válido durante {time}.',
    getNewCode: 'Obtener un código nuevo',
    backTo: 'Volver a {name}',
    qrAlt: 'Código QR que abre WhatsApp con el mensaje ya escrito',
    signedInAs: 'Sesión iniciada como {who}',
    name: 'Nombre',
    surname: 'Apellido',
    phone: 'Teléfono',
    roles: 'Roles',
    signOut: 'Cerrar sesión',
    footer: 'Inicia sesión con un mensaje de chat: sin contraseña, sin código por SMS.',
    starting: 'Preparando un código…',
    renewing: 'Ese código caducó. Obteniendo uno nuevo…',
    waiting: 'Esperando tu mensaje…',
    awaitingConfirmation: 'Mensaje recibido. Confirma el inicio de sesión en WhatsApp.',
    signedIn: 'Sesión iniciada.',
    redirecting: 'Sesión iniciada. Volviendo…',
    expired: 'Este código caducó. Obtén un código nuevo para intentarlo otra vez.',
    denied: 'El inicio de sesión se rechazó en WhatsApp.',
    failed: 'No se pudo completar el inicio de sesión. Obtén un código nuevo para intentarlo otra vez.',
    renewed: 'Ese código caducó; este es uno nuevo. Esperando tu mensaje…',
    cannotStart: 'No se pudo iniciar la sesión: {reason}',
    cannotContinue: 'Este inicio de sesión no puede seguir aquí: vuelve a empezar desde la aplicación. ({reason})',
    openWhatsAppWith: 'Abrir WhatsApp con el mensaje {text} ya escrito',
  },
};

/** `{name}` placeholders filled from `values`; an unknown one is left as it is. */
export const fillText = (text: string, values: Record<string, string>): string =>
  text.replace(/\{(\w+)\}/g, (m, k: string) => (Object.hasOwn(values, k) ? values[k]! : m));

const SCRIPT_KEYS: (keyof ScriptTexts)[] = [
  'starting',
  'renewing',
  'waiting',
  'awaitingConfirmation',
  'signedIn',
  'redirecting',
  'expired',
  'denied',
  'failed',
  'renewed',
  'cannotStart',
  'cannotContinue',
  'openWhatsAppWith',
];

/** The texts the script needs, for the page's data. */
export const scriptTexts = (t: PageTexts): ScriptTexts => Object.fromEntries(SCRIPT_KEYS.map((k) => [k, t[k]])) as unknown as ScriptTexts;

/**
 * The page's language for a request: the first of the browser's `Accept-Language` (Koa's
 * `ctx.acceptsLanguages`, best first, `pt-BR` counting as `pt`) we have, else `fallback` (the chat's).
 */
export function pageLanguage(accepted: readonly string[], fallback: PageLanguage): PageLanguage {
  for (const tag of accepted) {
    const base = tag.toLowerCase().split('-')[0]!;
    if (base === '*') return fallback;
    if ((PAGE_LANGUAGES as readonly string[]).includes(base)) return base as PageLanguage;
  }
  return fallback;
}
