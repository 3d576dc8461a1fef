/** What a login hands the client: by check-login and by the auth-success event. */
export interface LoginUser {
  id: string;
  name: string;
  /** present when the account has a phone: someone known only by a LID or user id has none */
  phone?: string;
  roles: string[];
}

export interface LoginResult {
  token: string;
  refreshToken: string;
  user: LoginUser;
}

/** The profile's user record: the login user plus surname. */
export interface User extends LoginUser {
  surname: string;
}

/** A login result as the worker keeps it in the registration hash (JSON written by complete-login). */
export const parseLoginResult = (json: string): LoginResult => JSON.parse(json) as LoginResult;
