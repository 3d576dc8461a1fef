import { createRequire } from 'node:module';
import path from 'node:path';
import { buildOpenApi } from '../../openapi/document.js';
import { packageVersion } from '../../openapi/version.js';
import type { AppRouter } from '../context.js';
import { CSS, JS, registerAssets } from '../static-assets.js';

/** Swagger UI's files, from its npm package (no CDN). */
const swaggerDir = (): string => path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Our start-up script for the page: a file of its own, since the page's CSP allows no inline script. */
const INIT_JS = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, defaultModelsExpandDepth: 0 });\n`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pin-auth API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * GET /openapi.json (built once, at start, from the route list and the JSON Schemas) and the
 * reference page at /docs, rendered by Swagger UI served from node_modules.
 */
export function registerDocsRoutes(router: AppRouter): void {
  const document = JSON.stringify(buildOpenApi({ version: packageVersion() }));
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = document;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  const dir = swaggerDir();
  registerAssets(router, '/docs', {
    'swagger-ui.css': { file: path.join(dir, 'swagger-ui.css'), type: CSS },
    'swagger-ui-bundle.js': { file: path.join(dir, 'swagger-ui-bundle.js'), type: JS },
    'init.js': { text: INIT_JS, type: JS },
  });
}
