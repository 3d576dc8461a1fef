import { expect } from 'chai';
import { renderConsolePage } from '../../src/demo/console/page.js';
import { CONSOLE_TEXTS } from '../../src/demo/console/texts.js';
import { PAGE_LANGUAGES } from '../../src/demo/texts.js';

const base = { appName: 'Acme', lang: 'en' as const, whatsappNumber: '15551234567', pictured: [], icons: true, links: { queues: true, metrics: true } };

describe("console: the page's markup (src/demo/console/page.ts)", function () {
  it('has its words in every page language, none left empty', function () {
    for (const lang of PAGE_LANGUAGES) {
      const t = CONSOLE_TEXTS[lang];
      expect(Object.keys(t), lang).to.have.members(Object.keys(CONSOLE_TEXTS.en));
      for (const [k, v] of Object.entries(t)) expect(v.trim(), `${lang}.${k}`).to.not.equal('');
      const html = renderConsolePage({ ...base, lang });
      expect(html, lang).to.include(`<html lang="${lang}">`).and.include(`<h1 id="title">${t.title}</h1>`);
    }
  });

  it('escapes what it is given and keeps its data inside its script element', function () {
    const html = renderConsolePage({ ...base, appName: '</script><img src=x onerror=alert(1)>' });
    expect(html).to.not.include('<img src=x');
    expect(html).to.include('&#60;/script&#62;&#60;img src=x onerror=alert(1)&#62;');
    const data = /<script type="application\/json" id="console-data">(.*?)<\/script>/s.exec(html)![1]!;
    expect(data).to.not.include('<');
    expect(JSON.parse(data).texts.title).to.equal('Operator console');
    // one external script, of this origin; no inline script
    expect(html.match(/<script\b[^>]*>/g)).to.deep.equal([
      '<script type="application/json" id="console-data">',
      '<script type="module" src="/admin/console/console.js">',
    ]);
  });

  it('links the queue dashboard, metrics and the icon only where they are served', function () {
    const all = renderConsolePage(base);
    expect(all).to.include('href="/admin/queues"').and.include('href="/metrics"').and.include('href="/favicon.ico"');
    const none = renderConsolePage({ ...base, icons: false, links: { queues: false, metrics: false }, whatsappNumber: undefined });
    expect(none).to.not.include('/admin/queues');
    expect(none).to.not.include('href="/metrics"');
    expect(none).to.not.include('favicon');
    expect(none).to.not.include('id="number"');
  });
});
