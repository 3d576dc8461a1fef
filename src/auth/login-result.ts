/** What a login hands the client: by check-login and by the auth-success event. */
export interface LoginUser {
  id: string;
  name: string;
  phone: string;
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
