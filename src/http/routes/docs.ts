import { createRequire } from 'node:module';
import path from 'node:path';
import { buildOpenApi } from '../../openapi/document.js';
import { packageVersion } from '../../openapi/version.js';
import type { AppContext } from '../context.js';
import { CSS, JS, type Asset } from '../static-assets.js';

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

/** GET /openapi.json: the document, built once at start from the route list and the JSON Schemas. */
export function openApiJson() {
  const document = JSON.stringify(buildOpenApi({ version: packageVersion() }));
  return (ctx: AppContext): void => {
    ctx.type = 'application/json';
    ctx.body = document;
  };
}

/** GET /docs: the API reference, rendered by Swagger UI (its files: `docsAssets`). */
export function docsPage(ctx: AppContext): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = PAGE;
}

/** GET /docs/:asset: Swagger UI's files, from its npm package (no CDN), and our start-up script. */
export function docsAssets(): Record<string, Asset> {
  const dir = swaggerDir();
  return {
    'swagger-ui.css': { file: path.join(dir, 'swagger-ui.css'), type: CSS },
    'swagger-ui-bundle.js': { file: path.join(dir, 'swagger-ui-bundle.js'), type: JS },
    'init.js': { text: INIT_JS, type: JS },
  };
}
