import winston from 'winston';

/**
 * winston logger: JSON in production, readable lines elsewhere. Callers pass ids (requestId,
 * pinId, userId, jobId) as fields, never a PIN, a token or message text.
 */
export type Logger = winston.Logger;

export function createLogger(opts: { level: string; production: boolean; role: string; instance: string }): Logger {
  const format = opts.production
    ? winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json())
    : winston.format.combine(
        winston.format.timestamp({ format: 'HH:mm:ss.SSS' }),
        winston.format.errors({ stack: true }),
        winston.format.printf((info) => {
          const { level, message, timestamp, stack, role, instance, ...rest } = info;
          const extra = Object.keys(rest).length > 0 ? ' ' + JSON.stringify(rest) : '';
          return `${String(timestamp)} ${String(role)} ${level}: ${String(message)}${extra}${stack ? '\n' + String(stack) : ''}`;
        }),
      );
  const logger = winston.createLogger({
    level: opts.level,
    defaultMeta: { role: opts.role, instance: opts.instance },
    format,
    transports: [new winston.transports.Console({ stderrLevels: ['error'] })],
  });
  // winston builds and streams every entry before its level filter drops it; on the login and
  // webhook paths that cost showed. Levels below the configured one become no-ops (children
  // inherit them: winston's child loggers are prototype-linked to their parent).
  for (const level of Object.keys(logger.levels)) {
    if (!logger.isLevelEnabled(level)) (logger as unknown as Record<string, () => Logger>)[level] = () => logger;
  }
  return logger;
}
