import { format } from 'node:util';
import winston from 'winston';

/**
 * winston logger: JSON in production, readable lines elsewhere. Callers pass ids (requestId,
 * pinId, userId, jobId) as fields, never a PIN, a token or message text.
 */
export type Logger = winston.Logger;

export function createLogger(opts: { level: string; production: boolean; role: string; instance: string }): Logger {
  // winston formats a line before its transport compares levels: a line below the logger's level
  // is dropped first (a format returning false filters the line: winston's documented way)
  const atLevel = winston.format((info) => (logger.isLevelEnabled(info.level) ? info : false));
  const format = opts.production
    ? winston.format.combine(atLevel(), winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json())
    : winston.format.combine(
        atLevel(),
        winston.format.timestamp({ format: 'HH:mm:ss.SSS' }),
        winston.format.errors({ stack: true }),
        winston.format.printf((info) => {
          const { level, message, timestamp, stack, role, instance, ...rest } = info;
          const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
          return `${String(timestamp)} ${String(role)} ${level}: ${String(message)}${extra}${stack ? `\n${String(stack)}` : ''}`;
        }),
      );
  const logger = winston.createLogger({
    level: opts.level,
    defaultMeta: { role: opts.role, instance: opts.instance },
    format,
    transports: [new winston.transports.Console({ stderrLevels: ['error'] })],
  });
  return logger;
}

const CONSOLE_LEVELS = { debug: 'debug', log: 'info', info: 'info', warn: 'warn', error: 'error' } as const;

/**
 * Libraries print to the console on their own (BullMQ's eviction-policy and Redis-version
 * warnings, oidc-provider's notices; Node's process warnings go through console.error): each
 * call becomes one entry of `log`, so that in production every line is one JSON object. For the
 * process's entry points only (bin/bootstrap.ts), after the logger is made: winston's Console
 * transport keeps the methods it found then.
 */
export function routeConsoleTo(log: Logger): void {
  for (const [method, level] of Object.entries(CONSOLE_LEVELS)) {
    console[method as keyof typeof CONSOLE_LEVELS] = (...args: unknown[]) => {
      log.log(level, format(...args), { source: 'console' });
    };
  }
}
