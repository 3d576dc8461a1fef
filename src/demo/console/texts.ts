import type { PageLanguage } from '../texts.js';

/**
 * The operator console's words (src/demo/console/), in the login page's languages: the page is
 * read in the language the browser asks for (`Accept-Language`), else the chat's. The server
 * renders the markup with them and hands the whole set to the page's script in its data (the
 * script renders the lists and answers). `{name}` placeholders are filled by `fillText`.
 */
export interface ConsoleTexts {
  title: string;
  signInTitle: string;
  signInHint: string;
  /** {number} */
  writeTo: string;
  openWhatsApp: string;
  /** {text} */
  openWhatsAppWith: string;
  getNewCode: string;
  starting: string;
  waiting: string;
  awaitingConfirmation: string;
  signedIn: string;
  expired: string;
  denied: string;
  failed: string;
  /** {reason} */
  cannotStart: string;
  notAdminTitle: string;
  /** {who} */
  notAdmin: string;
  tryAgain: string;
  signOut: string;
  /** {who} */
  signedInAs: string;
  nav: string;
  people: string;
  keys: string;
  events: string;
  queues: string;
  metrics: string;
  searchLabel: string;
  searchHint: string;
  search: string;
  more: string;
  noResults: string;
  /** {count} */
  results: string;
  name: string;
  phone: string;
  roles: string;
  status: string;
  created: string;
  lastLogin: string;
  open: string;
  blocked: string;
  active: string;
  never: string;
  back: string;
  identifiers: string;
  kind: string;
  value: string;
  userId: string;
  /** {who}, {when}, {reason} */
  blockedSince: string;
  rolesLabel: string;
  rolesHint: string;
  saveRoles: string;
  /** {roles} */
  rolesSaved: string;
  sessions: string;
  noSessions: string;
  client: string;
  device: string;
  ip: string;
  lastUsed: string;
  expires: string;
  endSession: string;
  /** {device} */
  endSessionOf: string;
  endAllSessions: string;
  /** {count} */
  sessionsEnded: string;
  blockTitle: string;
  blockReason: string;
  block: string;
  unblock: string;
  /** {count} */
  blockedDone: string;
  unblockedDone: string;
  recentEvents: string;
  noEvents: string;
  time: string;
  type: string;
  actor: string;
  detail: string;
  eraseTitle: string;
  eraseWarning: string;
  /** {name} */
  eraseConfirmLabel: string;
  erase: string;
  eraseMismatch: string;
  /** {id}, {erasedAt} */
  erased: string;
  keysIntro: string;
  noKeys: string;
  keyName: string;
  scopes: string;
  createKey: string;
  revoke: string;
  /** {name} */
  revokeOf: string;
  /** {name} */
  revoked: string;
  /** {when} */
  revokedAt: string;
  secretTitle: string;
  secretHint: string;
  copy: string;
  copied: string;
  scopeRequired: string;
  eventsIntro: string;
  follow: string;
  stopFollowing: string;
  following: string;
  stopped: string;
  /** {reason} */
  streamLost: string;
  filterUser: string;
  filterType: string;
  anyType: string;
  /** {message} */
  failedAction: string;
  loading: string;
  footer: string;
}

export const CONSOLE_TEXTS: Record<PageLanguage, ConsoleTexts> = {
  en: {
    title: 'Operator console',
    signInTitle: 'Sign in as an admin',
    signInHint: 'Send this code from your WhatsApp, as any sign-in. Admins always confirm it in the chat.',
    writeTo: 'Our WhatsApp number: {number}',
    openWhatsApp: 'Open WhatsApp',
    openWhatsAppWith: 'Open WhatsApp with the message {text} typed in',
    getNewCode: 'Get a new code',
    starting: 'Preparing a code…',
    waiting: 'Waiting for your message…',
    awaitingConfirmation: 'Message received. Please confirm the sign-in in WhatsApp.',
    signedIn: 'Signed in. Checking your role…',
    expired: 'This code has expired. Get a new code to try again.',
    denied: 'The sign-in was declined in WhatsApp.',
    failed: 'The sign-in could not be completed. Get a new code to try again.',
    cannotStart: 'Could not start a sign-in: {reason}',
    notAdminTitle: 'Not an admin',
    notAdmin:
      '{who} is signed in but does not have the admin role, so the console stays closed. An admin can grant the role (npm run accounts -- grant-admin).',
    tryAgain: 'Check again',
    signOut: 'Sign out',
    signedInAs: 'Signed in as {who}',
    nav: 'Console sections',
    people: 'People',
    keys: 'API keys',
    events: 'Live events',
    queues: 'Queue dashboard',
    metrics: 'Metrics',
    searchLabel: 'Find a person',
    searchHint: 'A phone number in any format, a name, a user id, a LID or a BSUID. Empty: the newest accounts.',
    search: 'Search',
    more: 'Show more',
    noResults: 'No one found.',
    results: '{count} shown',
    name: 'Name',
    phone: 'Phone',
    roles: 'Roles',
    status: 'Status',
    created: 'Created',
    lastLogin: 'Last sign-in',
    open: 'Open',
    blocked: 'Blocked',
    active: 'Active',
    never: 'never',
    back: 'Back to the search',
    identifiers: 'Identifiers',
    kind: 'Kind',
    value: 'Value',
    userId: 'User id',
    blockedSince: 'Blocked {when} by {who}. Reason: {reason}',
    rolesLabel: 'Roles (comma-separated)',
    rolesHint: 'The role "user" always stays. New tokens carry the change; open sessions at their next refresh.',
    saveRoles: 'Save roles',
    rolesSaved: 'Roles saved: {roles}.',
    sessions: 'Sessions',
    noSessions: 'No open sessions.',
    client: 'Client',
    device: 'Device',
    ip: 'IP',
    lastUsed: 'Last used',
    expires: 'Expires',
    endSession: 'End',
    endSessionOf: 'End the session of {device}',
    endAllSessions: 'End all sessions',
    sessionsEnded: '{count} sessions ended.',
    blockTitle: 'Block',
    blockReason: 'Reason (optional)',
    block: 'Block this person',
    unblock: 'Unblock',
    blockedDone: 'Blocked; {count} sessions ended.',
    unblockedDone: 'Unblocked: they can sign in again.',
    recentEvents: 'Recent events',
    noEvents: 'No events.',
    time: 'Time',
    type: 'Type',
    actor: 'Actor',
    detail: 'Detail',
    eraseTitle: 'Erase',
    eraseWarning: 'Erasing removes everything held about this person and cannot be undone. Their next message creates a new account.',
    eraseConfirmLabel: 'Type {name} to confirm',
    erase: 'Erase this person',
    eraseMismatch: 'The confirmation does not match.',
    erased: 'Erased {id} at {erasedAt}.',
    keysIntro: 'API keys let machines call the admin API. A key is shown once, when it is made.',
    noKeys: 'No API keys.',
    keyName: 'Name',
    scopes: 'Scopes',
    createKey: 'Create a key',
    revoke: 'Revoke',
    revokeOf: 'Revoke the key {name}',
    revoked: 'Key {name} revoked.',
    revokedAt: 'Revoked {when}',
    secretTitle: 'The new key (shown once)',
    secretHint: 'Copy it now: it is stored hashed and cannot be shown again.',
    copy: 'Copy',
    copied: 'Copied.',
    scopeRequired: 'Choose at least one scope.',
    eventsIntro: 'The audit trail as it happens.',
    follow: 'Follow',
    stopFollowing: 'Stop',
    following: 'Following the audit trail…',
    stopped: 'Not following.',
    streamLost: 'The stream stopped: {reason}',
    filterUser: 'User id (optional)',
    filterType: 'Type',
    anyType: 'Any type',
    failedAction: 'That did not work: {message}',
    loading: 'Loading…',
    footer: 'The operator console of pin-auth.',
  },
  pt: {
    title: 'Console do operador',
    signInTitle: 'Entrar como administrador',
    signInHint: 'Envie este código pelo seu WhatsApp, como em qualquer entrada. Administradores sempre confirmam no chat.',
    writeTo: 'Nosso número do WhatsApp: {number}',
    openWhatsApp: 'Abrir o WhatsApp',
    openWhatsAppWith: 'Abrir o WhatsApp com a mensagem {text} já escrita',
    getNewCode: 'Gerar um novo código',
    starting: 'Preparando um código…',
    waiting: 'Aguardando a sua mensagem…',
    awaitingConfirmation: 'Mensagem recebida. Confirme a entrada no WhatsApp.',
    signedIn: 'Você entrou. Verificando a sua função…',
    expired: 'Este código expirou. Gere um novo código para tentar de novo.',
    denied: 'A entrada foi recusada no WhatsApp.',
    failed: 'Não foi possível concluir a entrada. Gere um novo código para tentar de novo.',
    cannotStart: 'Não foi possível começar a entrada: {reason}',
    notAdminTitle: 'Não é administrador',
    notAdmin:
      '{who} entrou, mas não tem a função admin; o console continua fechado. Um administrador pode conceder a função (npm run accounts -- grant-admin).',
    tryAgain: 'Verificar de novo',
    signOut: 'Sair',
    signedInAs: 'Você entrou como {who}',
    nav: 'Seções do console',
    people: 'Pessoas',
    keys: 'Chaves de API',
    events: 'Eventos ao vivo',
    queues: 'Painel das filas',
    metrics: 'Métricas',
    searchLabel: 'Encontrar uma pessoa',
    searchHint: 'Um telefone em qualquer formato, um nome, um id de usuário, um LID ou um BSUID. Vazio: as contas mais novas.',
    search: 'Buscar',
    more: 'Mostrar mais',
    noResults: 'Ninguém encontrado.',
    results: '{count} mostradas',
    name: 'Nome',
    phone: 'Telefone',
    roles: 'Funções',
    status: 'Situação',
    created: 'Criada',
    lastLogin: 'Última entrada',
    open: 'Abrir',
    blocked: 'Bloqueada',
    active: 'Ativa',
    never: 'nunca',
    back: 'Voltar para a busca',
    identifiers: 'Identificadores',
    kind: 'Tipo',
    value: 'Valor',
    userId: 'Id de usuário',
    blockedSince: 'Bloqueada {when} por {who}. Motivo: {reason}',
    rolesLabel: 'Funções (separadas por vírgula)',
    rolesHint: 'A função "user" sempre fica. Novos tokens levam a mudança; sessões abertas, na próxima renovação.',
    saveRoles: 'Salvar funções',
    rolesSaved: 'Funções salvas: {roles}.',
    sessions: 'Sessões',
    noSessions: 'Nenhuma sessão aberta.',
    client: 'Cliente',
    device: 'Dispositivo',
    ip: 'IP',
    lastUsed: 'Último uso',
    expires: 'Expira',
    endSession: 'Encerrar',
    endSessionOf: 'Encerrar a sessão de {device}',
    endAllSessions: 'Encerrar todas as sessões',
    sessionsEnded: '{count} sessões encerradas.',
    blockTitle: 'Bloquear',
    blockReason: 'Motivo (opcional)',
    block: 'Bloquear esta pessoa',
    unblock: 'Desbloquear',
    blockedDone: 'Bloqueada; {count} sessões encerradas.',
    unblockedDone: 'Desbloqueada: pode entrar de novo.',
    recentEvents: 'Eventos recentes',
    noEvents: 'Nenhum evento.',
    time: 'Hora',
    type: 'Tipo',
    actor: 'Autor',
    detail: 'Detalhe',
    eraseTitle: 'Apagar',
    eraseWarning: 'Apagar remove tudo o que se guarda sobre esta pessoa e não pode ser desfeito. A próxima mensagem dela cria uma conta nova.',
    eraseConfirmLabel: 'Digite {name} para confirmar',
    erase: 'Apagar esta pessoa',
    eraseMismatch: 'A confirmação não confere.',
    erased: '{id} apagada em {erasedAt}.',
    keysIntro: 'Chaves de API permitem que máquinas usem a API de administração. A chave aparece uma vez, ao ser criada.',
    noKeys: 'Nenhuma chave de API.',
    keyName: 'Nome',
    scopes: 'Escopos',
    createKey: 'Criar uma chave',
    revoke: 'Revogar',
    revokeOf: 'Revogar a chave {name}',
    revoked: 'Chave {name} revogada.',
    revokedAt: 'Revogada em {when}',
    secretTitle: 'A chave nova (aparece uma vez)',
    secretHint: 'Copie agora: ela é guardada como hash e não pode ser mostrada de novo.',
    copy: 'Copiar',
    copied: 'Copiada.',
    scopeRequired: 'Escolha ao menos um escopo.',
    eventsIntro: 'A trilha de auditoria enquanto acontece.',
    follow: 'Acompanhar',
    stopFollowing: 'Parar',
    following: 'Acompanhando a trilha de auditoria…',
    stopped: 'Sem acompanhar.',
    streamLost: 'O fluxo parou: {reason}',
    filterUser: 'Id de usuário (opcional)',
    filterType: 'Tipo',
    anyType: 'Qualquer tipo',
    failedAction: 'Não deu certo: {message}',
    loading: 'Carregando…',
    footer: 'O console do operador do pin-auth.',
  },
  es: {
    title: 'Consola del operador',
    signInTitle: 'Iniciar sesión como administrador',
    signInHint: 'Envía este código desde tu WhatsApp, como cualquier inicio de sesión. Los administradores siempre lo confirman en el chat.',
    writeTo: 'Nuestro número de WhatsApp: {number}',
    openWhatsApp: 'Abrir WhatsApp',
    openWhatsAppWith: 'Abrir WhatsApp con el mensaje {text} ya escrito',
    getNewCode: 'Obtener un código nuevo',
    starting: 'Preparando un código…',
    waiting: 'Esperando tu mensaje…',
    awaitingConfirmation: 'Mensaje recibido. Confirma el inicio de sesión en WhatsApp.',
    signedIn: 'Sesión iniciada. Comprobando tu rol…',
    expired: 'Este código caducó. Obtén un código nuevo para intentarlo otra vez.',
    denied: 'El inicio de sesión se rechazó en WhatsApp.',
    failed: 'No se pudo completar el inicio de sesión. Obtén un código nuevo para intentarlo otra vez.',
    cannotStart: 'No se pudo iniciar la sesión: {reason}',
    notAdminTitle: 'No eres administrador',
    notAdmin:
      '{who} inició sesión pero no tiene el rol admin, así que la consola sigue cerrada. ' +
      'Un administrador puede conceder el rol (npm run accounts -- grant-admin).',
    tryAgain: 'Comprobar otra vez',
    signOut: 'Cerrar sesión',
    signedInAs: 'Sesión iniciada como {who}',
    nav: 'Secciones de la consola',
    people: 'Personas',
    keys: 'Claves de API',
    events: 'Eventos en vivo',
    queues: 'Panel de colas',
    metrics: 'Métricas',
    searchLabel: 'Buscar a una persona',
    searchHint: 'Un teléfono en cualquier formato, un nombre, un id de usuario, un LID o un BSUID. Vacío: las cuentas más nuevas.',
    search: 'Buscar',
    more: 'Mostrar más',
    noResults: 'No se encontró a nadie.',
    results: '{count} mostradas',
    name: 'Nombre',
    phone: 'Teléfono',
    roles: 'Roles',
    status: 'Estado',
    created: 'Creada',
    lastLogin: 'Último inicio de sesión',
    open: 'Abrir',
    blocked: 'Bloqueada',
    active: 'Activa',
    never: 'nunca',
    back: 'Volver a la búsqueda',
    identifiers: 'Identificadores',
    kind: 'Tipo',
    value: 'Valor',
    userId: 'Id de usuario',
    blockedSince: 'Bloqueada {when} por {who}. Motivo: {reason}',
    rolesLabel: 'Roles (separados por comas)',
    rolesHint: 'El rol "user" siempre se queda. Los tokens nuevos llevan el cambio; las sesiones abiertas, en su próxima renovación.',
    saveRoles: 'Guardar roles',
    rolesSaved: 'Roles guardados: {roles}.',
    sessions: 'Sesiones',
    noSessions: 'No hay sesiones abiertas.',
    client: 'Cliente',
    device: 'Dispositivo',
    ip: 'IP',
    lastUsed: 'Último uso',
    expires: 'Caduca',
    endSession: 'Cerrar',
    endSessionOf: 'Cerrar la sesión de {device}',
    endAllSessions: 'Cerrar todas las sesiones',
    sessionsEnded: '{count} sesiones cerradas.',
    blockTitle: 'Bloquear',
    blockReason: 'Motivo (opcional)',
    block: 'Bloquear a esta persona',
    unblock: 'Desbloquear',
    blockedDone: 'Bloqueada; {count} sesiones cerradas.',
    unblockedDone: 'Desbloqueada: puede iniciar sesión otra vez.',
    recentEvents: 'Eventos recientes',
    noEvents: 'No hay eventos.',
    time: 'Hora',
    type: 'Tipo',
    actor: 'Autor',
    detail: 'Detalle',
    eraseTitle: 'Borrar',
    eraseWarning: 'Borrar elimina todo lo que se guarda sobre esta persona y no se puede deshacer. Su próximo mensaje crea una cuenta nueva.',
    eraseConfirmLabel: 'Escribe {name} para confirmar',
    erase: 'Borrar a esta persona',
    eraseMismatch: 'La confirmación no coincide.',
    erased: '{id} borrada el {erasedAt}.',
    keysIntro: 'Las claves de API permiten a las máquinas usar la API de administración. Una clave se muestra una vez, al crearla.',
    noKeys: 'No hay claves de API.',
    keyName: 'Nombre',
    scopes: 'Ámbitos',
    createKey: 'Crear una clave',
    revoke: 'Revocar',
    revokeOf: 'Revocar la clave {name}',
    revoked: 'Clave {name} revocada.',
    revokedAt: 'Revocada el {when}',
    secretTitle: 'La clave nueva (se muestra una vez)',
    secretHint: 'Cópiala ahora: se guarda como hash y no se puede mostrar otra vez.',
    copy: 'Copiar',
    copied: 'Copiada.',
    scopeRequired: 'Elige al menos un ámbito.',
    eventsIntro: 'El registro de auditoría mientras ocurre.',
    follow: 'Seguir',
    stopFollowing: 'Parar',
    following: 'Siguiendo el registro de auditoría…',
    stopped: 'Sin seguir.',
    streamLost: 'El flujo se detuvo: {reason}',
    filterUser: 'Id de usuario (opcional)',
    filterType: 'Tipo',
    anyType: 'Cualquier tipo',
    failedAction: 'No funcionó: {message}',
    loading: 'Cargando…',
    footer: 'La consola del operador de pin-auth.',
  },
};
