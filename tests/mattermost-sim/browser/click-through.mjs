#!/usr/bin/env node
// Headless-Chromium click-through of the Mattermost simulator's browser client.
//
//   node click-through.mjs --url http://127.0.0.1:PORT --username ada --password PW \
//     --channel CHANNEL_NAME --message TEXT --action ACTIONID \
//     [--dialog-field reason --dialog-value TEXT] --expect-text TEXT --screenshot PATH [--timeout MS]
//
// Signs in, opens the channel, posts the message and waits to see it, clicks the attachment
// button ACTIONID on the newest post carrying it, fills the dialog field and submits when
// --dialog-value is given (a button such as Approve opens no dialog), and waits until the page
// shows --expect-text. Exit 0 on success; on failure it saves PATH with a "-failure" suffix,
// prints what it was waiting for and the page's visible text, and exits 1.
//
// Uses Debian's Chromium (CHROMIUM env var or /usr/bin/chromium); never downloads a browser.

import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    username: { type: 'string' },
    password: { type: 'string' },
    channel: { type: 'string' },
    message: { type: 'string' },
    action: { type: 'string' },
    'dialog-field': { type: 'string', default: 'reason' },
    'dialog-value': { type: 'string' },
    'expect-text': { type: 'string' },
    screenshot: { type: 'string', default: 'click-through.png' },
    timeout: { type: 'string', default: '15000' },
  },
});

for (const k of ['url', 'username', 'password', 'channel', 'message', 'action', 'expect-text']) {
  if (!opt[k]) {
    console.error(`missing --${k}`);
    process.exit(2);
  }
}

const STEP_MS = Number(opt.timeout) || 15000;
const failurePath = (p) => {
  const ext = path.extname(p);
  return ext ? p.slice(0, -ext.length) + '-failure' + ext : p + '-failure';
};
const css = (s) => JSON.stringify(String(s)); // quoted CSS attribute value

let step = 'launching Chromium';
const log = (msg) => console.log(`[click-through] ${msg}`);

/** Run one step with a description used in failure reports. */
async function stepDo(description, fn) {
  step = description;
  log(description);
  return fn();
}

const userDataDir = mkdtempSync(path.join(tmpdir(), 'click-through-'));
let context;
let page;
let exitCode = 1;

try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: false, // the flags below choose the new headless mode explicitly
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
    timeout: STEP_MS * 2,
  });
  page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(STEP_MS);
  page.on('pageerror', (e) => log(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') log(`console error: ${m.text()}`); });

  await stepDo(`opening ${opt.url}`, () => page.goto(opt.url, { waitUntil: 'domcontentloaded' }));

  await stepDo(`signing in as ${opt.username}`, async () => {
    await page.getByTestId('login-username').fill(opt.username);
    await page.getByTestId('login-password').fill(opt.password);
    await page.getByTestId('login-submit').click();
    await page.waitForFunction(() => !document.getElementById('app-view').hidden
      || !document.getElementById('login-error').hidden);
    const err = page.getByTestId('login-error');
    if (await err.isVisible()) throw new Error(`sign-in refused: ${await err.innerText()}`);
    await page.getByTestId('channel-list').waitFor();
  });

  await stepDo('waiting for the websocket to be connected', () =>
    page.waitForSelector('[data-testid="ws-status"][data-state="connected"]', { state: 'attached' }));

  await stepDo(`opening channel ${opt.channel}`, async () => {
    const byName = page.locator(`[data-testid=${css('channel-' + opt.channel)}], [data-dm-user=${css(opt.channel)}]`).first();
    await byName.click();
    await page.waitForSelector(`.channel-item.active[data-testid=${css('channel-' + opt.channel)}], .channel-item.active[data-dm-user=${css(opt.channel)}]`);
    // A channel is loaded once it shows posts, system posts (every real channel
    // opens with a join post) or its empty state.
    await page.waitForSelector('[data-testid="post"], [data-testid="system-post"], [data-testid="no-posts"]', { state: 'attached' });
  });

  let ourPostId = null;
  await stepDo(`posting message ${JSON.stringify(opt.message)} and waiting to see it`, async () => {
    const composer = page.getByTestId('composer');
    await composer.click();
    await composer.fill(opt.message);
    await composer.press('Enter');
    const handle = await page.waitForFunction((msg) => {
      const norm = (s) => s.replace(/\s+/g, ' ').trim();
      const posts = [...document.querySelectorAll('[data-testid="post"]')].reverse();
      const hit = posts.find((el) => norm(el.querySelector('[data-testid="post-message"]').innerText).includes(norm(msg)));
      return hit ? hit.dataset.postId : null;
    }, opt.message);
    ourPostId = await handle.jsonValue();
    log(`message rendered as post ${ourPostId}`);
  });

  // Baseline count of the expected text before anything is clicked, so that an occurrence
  // that was already on the page does not count as the integration's rewrite.
  const countText = (needle) => page.evaluate((n) => document.body.innerText.split(n).length - 1, needle);
  const baseline = await countText(opt['expect-text']);

  let clickedPostId = null;
  await stepDo(`waiting for an enabled button "${opt.action}" on a post newer than the message`, async () => {
    const pick = (args) => page.waitForFunction(({ action, after, anyPost }) => {
      const posts = [...document.querySelectorAll('[data-testid="post"]')];
      const start = anyPost ? 0 : posts.findIndex((el) => el.dataset.postId === after) + 1;
      for (let i = posts.length - 1; i >= start; i--) {
        const btn = posts[i].querySelector(`[data-testid="action-${CSS.escape(action)}"]`);
        if (btn && !btn.disabled) return posts[i].dataset.postId;
      }
      return null;
    }, args);
    let handle;
    try {
      handle = await pick({ action: opt.action, after: ourPostId, anyPost: false });
    } catch (e) {
      log(`no newer post carries "${opt.action}"; falling back to the newest post carrying it anywhere`);
      step = `waiting for an enabled button "${opt.action}" on any post`;
      handle = await pick({ action: opt.action, after: ourPostId, anyPost: true });
    }
    clickedPostId = await handle.jsonValue();
    log(`clicking "${opt.action}" on post ${clickedPostId}`);
    await page.locator(`[data-testid="post"][data-post-id=${css(clickedPostId)}] [data-testid=${css('action-' + opt.action)}]`).click();
  });

  if (opt['dialog-value'] !== undefined) {
    await stepDo('waiting for the interactive dialog', async () => {
      const handle = await page.waitForFunction((postId) => {
        if (!document.getElementById('dialog-backdrop').hidden) return 'open';
        const post = document.querySelector(`[data-post-id="${CSS.escape(postId)}"]`);
        const err = post && post.querySelector('[data-testid="action-error"]');
        return err ? 'the click failed: ' + err.innerText : null;
      }, clickedPostId);
      const state = await handle.jsonValue();
      if (state !== 'open') throw new Error(state);
    });

    await stepDo(`filling dialog field "${opt['dialog-field']}" and submitting`, async () => {
      const field = page.getByTestId(`dialog-field-${opt['dialog-field']}`);
      const tag = await field.evaluate((el) => `${el.tagName.toLowerCase()}:${el.getAttribute('type') || ''}`);
      if (tag.startsWith('select')) await field.selectOption(opt['dialog-value']);
      else if (tag === 'input:checkbox') await field.setChecked(/^(1|true|yes|on)$/i.test(opt['dialog-value']));
      else if (tag.startsWith('fieldset')) await page.getByTestId(`dialog-field-${opt['dialog-field']}-${opt['dialog-value']}`).check();
      else await field.fill(opt['dialog-value']);
      await page.getByTestId('dialog-submit').click();
    });

    await stepDo('waiting for the dialog to close', async () => {
      const handle = await page.waitForFunction(() => {
        if (document.getElementById('dialog-backdrop').hidden) return 'closed';
        const errs = [...document.querySelectorAll('#dialog .error:not([hidden]), #dialog .field-error:not([hidden])')]
          .map((e) => e.innerText.trim()).filter(Boolean);
        const busy = document.querySelector('[data-testid="dialog-submit"]').disabled;
        return !busy && errs.length ? 'error: ' + errs.join(' | ') : null;
      });
      const state = await handle.jsonValue();
      if (state !== 'closed') throw new Error(`the dialog stayed open with ${state}`);
    });
  }

  await stepDo(`waiting for the page to show ${JSON.stringify(opt['expect-text'])}`, async () => {
    // A click the integration refused shows as an error on its post: fail on it at once.
    const handle = await page.waitForFunction(({ needle, base, postId }) => {
      if (document.body.innerText.split(needle).length - 1 > base) return 'shown';
      const post = document.querySelector(`[data-post-id="${CSS.escape(postId)}"]`);
      const err = post && post.querySelector('[data-testid="action-error"]');
      return err ? 'the click failed: ' + err.innerText : null;
    }, { needle: opt['expect-text'], base: baseline, postId: clickedPostId });
    const state = await handle.jsonValue();
    if (state !== 'shown') throw new Error(state);
  });

  step = `saving screenshot ${opt.screenshot}`;
  await page.screenshot({ path: opt.screenshot });
  log(`OK — screenshot saved to ${opt.screenshot}`);
  exitCode = 0;
} catch (err) {
  console.error(`[click-through] FAILED while ${step}`);
  console.error(`[click-through] ${err && err.message ? err.message.split('\n')[0] : err}`);
  if (page) {
    const shot = failurePath(opt.screenshot);
    try {
      await page.screenshot({ path: shot });
      console.error(`[click-through] failure screenshot: ${shot}`);
    } catch (e) {
      console.error(`[click-through] could not save a screenshot: ${e.message}`);
    }
    try {
      const text = await page.evaluate(() => document.body.innerText);
      console.error('[click-through] visible page text:\n' + text.slice(0, 6000));
    } catch (e) {
      console.error(`[click-through] could not read the page text: ${e.message}`);
    }
  }
} finally {
  if (context) await context.close().catch(() => {});
  rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(exitCode);
