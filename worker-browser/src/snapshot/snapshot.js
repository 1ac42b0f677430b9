// The page as the model reads it (§3.4 Browsing): the rendered document walked
// once, every element an action can take given a ref that stays the element's
// own across snapshots, the visible text as markdown with links and controls
// inline by ref, images as their alt text alone. Evaluated by the browser
// worker; returns one JSON-able object.
(() => {
  const ATTR = 'data-collegium-ref';
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'svg', 'SVG', 'IFRAME', 'OBJECT', 'EMBED', 'CANVAS']);
  const BLOCK = new Set(['ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'DD', 'DETAILS', 'DIALOG', 'DIV', 'DL', 'DT', 'FIELDSET', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM', 'HEADER', 'HR', 'MAIN', 'NAV', 'OL', 'P', 'PRE', 'SECTION', 'TABLE', 'UL', 'TR', 'TBODY', 'THEAD', 'TFOOT', 'CAPTION', 'SUMMARY', 'BODY', 'MENU']);
  const ROLES = new Set(['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'checkbox', 'radio', 'tab', 'option', 'switch', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem']);
  const FORM = new Set(['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON']);
  const clip = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '…' : s; };

  let next = 1;
  for (const el of document.querySelectorAll('[' + ATTR + ']')) {
    const n = parseInt(el.getAttribute(ATTR).slice(1), 10);
    if (n >= next) next = n + 1;
  }
  const seen = new Set();
  const refOf = (el) => {
    let r = el.getAttribute(ATTR);
    // A page that copies an element copies its ref too; the copy gets its own.
    if (!r || seen.has(r)) { r = 'e' + next++; el.setAttribute(ATTR, r); }
    seen.add(r);
    return r;
  };
  const actionable = (el) => {
    const tag = el.tagName;
    if (tag === 'INPUT') return el.type !== 'hidden';
    if (FORM.has(tag) || tag === 'SUMMARY') return true;
    if (tag === 'A' && el.hasAttribute('href')) return true;
    const role = el.getAttribute('role');
    if (role && ROLES.has(role)) return true;
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return true;
    return el.hasAttribute('onclick');
  };
  const shown = (el) => {
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const labelOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria) return clip(aria, 80);
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const t = by.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(' ');
      if (t.trim()) return clip(t, 80);
    }
    if (el.labels && el.labels.length) return clip(Array.from(el.labels).map((l) => l.textContent).join(' '), 80);
    if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type)) return clip(el.value, 80);
    if (!FORM.has(el.tagName) || el.tagName === 'BUTTON') {
      const text = clip(el.innerText || el.textContent, 80);
      if (text) return text;
      const img = el.querySelector('img[alt]');
      if (img && img.alt.trim()) return clip(img.alt, 80);
    }
    return clip(el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name') || '', 80);
  };
  const kindOf = (el) => {
    const tag = el.tagName;
    if (tag === 'SELECT') return el.multiple ? 'list box' : 'drop-down';
    if (tag === 'TEXTAREA') return 'text area';
    if (tag === 'BUTTON') return 'button';
    if (tag === 'A') return 'link';
    if (tag === 'SUMMARY') return 'disclosure';
    if (tag === 'INPUT') {
      const t = el.type;
      if (['submit', 'button', 'reset', 'image'].includes(t)) return 'button';
      if (t === 'checkbox' || t === 'radio') return t;
      if (t === 'file') return 'file input';
      return t === 'text' ? 'text field' : t + ' field';
    }
    if (el.isContentEditable) return 'editable text';
    return el.getAttribute('role') || 'clickable';
  };

  const controls = [];
  const describe = (el, hidden, ref) => {
    const c = { ref: ref || refOf(el), kind: kindOf(el), label: labelOf(el), hidden, disabled: !!el.disabled };
    if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) c.checked = el.checked;
    else if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') c.value = el.value;
    if (el.tagName === 'SELECT') {
      c.options = Array.from(el.options).map((o) => ({ label: clip(o.label || o.text, 80), value: o.value, selected: o.selected }));
    }
    if (el.tagName === 'A') c.href = el.href;
    return c;
  };

  const out = [];
  let line = '';
  const flush = () => { if (line.trim()) out.push(line.replace(/[ \t]+/g, ' ').trim()); line = ''; };
  const blank = () => { flush(); if (out.length && out[out.length - 1] !== '') out.push(''); };
  const text = (t) => { line += t.replace(/\s+/g, ' '); };

  const walk = (node, prefix) => {
    if (node.nodeType === Node.TEXT_NODE) { text(node.data); return; }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIP.has(el.tagName)) return;
    const visible = el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    if (!visible) {
      // Nothing hidden is read as the page; what can be acted on is still
      // listed, marked hidden, so the model knows to reveal it (§3.4).
      if (actionable(el)) controls.push(describe(el, true));
      for (const a of el.querySelectorAll('*')) if (actionable(a)) controls.push(describe(a, true));
      return;
    }
    const tag = el.tagName;
    if (actionable(el)) {
      const hidden = !shown(el) && !(el.tagName === 'A' && el.innerText.trim());
      const r = refOf(el);
      const inline = tag === 'A' || tag === 'SUMMARY' || tag === 'BUTTON' || !!el.getAttribute('role');
      if (FORM.has(tag) || hidden || !inline) {
        const c = describe(el, hidden, r);
        controls.push(c);
        if (!inline) { text(' [' + r + ' ' + c.kind + (c.label ? ' "' + c.label + '"' : '') + '] '); return; }
      }
      const before = line;
      line = '';
      for (const ch of el.childNodes) walk(ch, prefix);
      const inner = line.replace(/\s+/g, ' ').trim() || labelOf(el);
      line = before + ' [' + inner + '][' + r + '] ';
      return;
    }
    if (tag === 'IMG') { if (el.alt && el.alt.trim()) text(' ' + el.alt.trim() + ' '); return; }
    if (tag === 'BR') { flush(); return; }
    const h = /^H([1-6])$/.exec(tag);
    if (h) { blank(); line = '#'.repeat(+h[1]) + ' '; for (const ch of el.childNodes) walk(ch, prefix); blank(); return; }
    if (tag === 'LI') { flush(); line = prefix + '- '; for (const ch of el.childNodes) walk(ch, prefix + '  '); flush(); return; }
    if (tag === 'PRE') { blank(); out.push('```', el.innerText.replace(/\n+$/, ''), '```'); out.push(''); return; }
    if (tag === 'TD' || tag === 'TH') { for (const ch of el.childNodes) walk(ch, prefix); text(' | '); return; }
    const block = BLOCK.has(tag) || getComputedStyle(el).display.startsWith('block') || getComputedStyle(el).display === 'flex';
    if (block) flush();
    if (tag === 'P' || tag === 'TABLE' || tag === 'BLOCKQUOTE') blank();
    for (const ch of el.childNodes) walk(ch, prefix);
    if (block) flush();
    if (tag === 'P' || tag === 'TABLE' || tag === 'BLOCKQUOTE') blank();
  };
  if (document.body) walk(document.body, '');
  flush();
  while (out.length && out[out.length - 1] === '') out.pop();

  const nav = performance.getEntriesByType('navigation')[0];
  return {
    url: location.href,
    title: document.title,
    status: nav && nav.responseStatus ? nav.responseStatus : null,
    contentType: document.contentType,
    controls,
    refs: Array.from(seen),
    page: out.join('\n'),
  };
})()
