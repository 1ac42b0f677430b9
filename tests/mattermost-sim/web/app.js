/*
 * Collegium — browser client for the Mattermost API v4 simulator.
 *
 * A deliberately small Mattermost web client: plain ES2020, no framework, no build step,
 * no external resources. It speaks the real Mattermost REST API v4 and websocket protocol
 * (see docs/mattermost-sim.md and the contract sections it indexes: 0.3, A, B, C, D).
 * This file's own sections are marked "==== N.".
 * Tests address elements through their data-testid attributes only.
 */
'use strict';
(() => {
  // ==== 1. DOM and formatting helpers =======================================

  const $ = (id) => document.getElementById(id);

  /** Create an element. attrs: class, text, html (renderMarkdown output only), on<event>, others as attributes. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k === 'html') el.innerHTML = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }

  function escapeHtml(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  }

  function parseJson(v) {
    if (typeof v !== 'string') return v || null;
    try { return JSON.parse(v); } catch { return null; }
  }

  function formatTime(ms) {
    const d = new Date(ms);
    const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    if (d.toDateString() === new Date().toDateString()) return time;
    return d.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + time;
  }

  function errorText(err) {
    if (err instanceof ApiError) return err.message + (err.id ? ` (${err.id})` : '');
    return (err && err.message) || String(err);
  }

  function showBanner(text) {
    const b = Object.assign($('banner'), { textContent: text || '', hidden: !text });
    clearTimeout(showBanner.timer);
    if (text) showBanner.timer = setTimeout(() => { b.hidden = true; }, 8000);
  }

  // ==== 2. Application state ================================================

  const TOKEN_KEY = 'collegium.token';
  const JOIN_LEAVE_TYPES = new Set(['system_join_channel', 'system_leave_channel', 'system_add_to_channel',
    'system_remove_from_channel', 'system_join_team', 'system_leave_team', 'system_add_to_team', 'system_remove_from_team']);

  const S = {
    token: null, me: null, teams: [], team: null,
    channels: [],             // Channel[] of the current team, plus the user's DMs/GMs
    users: new Map(),         // id -> User
    userMisses: new Set(),    // ids being fetched or unknown to the server
    current: null,            // current channel id
    posts: new Map(),         // id -> Post of the current channel (REST + events)
    extra: {},                // PostList.posts of the last load (includes thread roots outside `order`)
    ephemeral: new Map(),     // channel id -> Map(id -> ephemeral Post); never returned by REST
    unread: new Set(),        // channel ids with unseen posts
    actionErrors: new Map(),  // post id -> failed-click text
    pinnedOpen: false, commands: null, acItems: [], acIndex: 0,
    typing: new Map(),        // user id -> {channel, timer}
    lastTypingSent: 0, dialog: null, loadSeq: 0, pickerFor: null,
  };

  const channelById = (id) => S.channels.find((c) => c.id === id);

  // ==== 3. REST client ======================================================

  class ApiError extends Error {
    constructor(status, body) {
      super((body && typeof body === 'object' && body.message) || (typeof body === 'string' && body) || `HTTP ${status}`);
      this.status = status;
      this.id = body && typeof body === 'object' ? body.id || '' : '';
      this.body = body;
    }
  }

  /** Call /api/v4<path>; returns the parsed JSON body (or null); throws ApiError on non-2xx. */
  async function api(method, path, body) {
    const headers = { 'X-Requested-With': 'XMLHttpRequest', Accept: 'application/json' };
    if (S.token) headers.Authorization = 'Bearer ' + S.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch('/api/v4' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let data = null;
    if (text) { try { data = JSON.parse(text); } catch { data = text; } }
    if (!res.ok) {
      if (res.status === 401 && S.me && path !== '/users/logout') sessionExpired();
      throw new ApiError(res.status, data);
    }
    return data;
  }

  // ==== 4. Safe Markdown subset =============================================
  // Everything is HTML-escaped first; only the constructs below produce markup.

  const SAFE_URL = /^(https?:\/\/|mailto:)/i;

  function renderMarkdown(src) {
    const clean = String(src == null ? '' : src).replace(/\r\n?/g, '\n')
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
    return renderBlocks(escapeHtml(clean).split('\n'));
  }

  function renderBlocks(lines) {
    const out = [];
    let para = [];
    const flush = () => {
      if (para.length) out.push('<p>' + para.map(renderInline).join('<br>') + '</p>');
      para = [];
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      let m;
      if ((m = line.match(/^\s*```(.*)```\s*$/)) && m[1].trim()) {          // ```one-line code```
        flush(); out.push(`<pre><code>${m[1]}</code></pre>`); continue;
      }
      if (/^\s*```/.test(line)) {                                              // fenced block
        flush();
        const code = [];
        for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) code.push(lines[i]);
        out.push(`<pre><code>${code.join('\n')}</code></pre>`);
        continue;
      }
      if ((m = line.match(/^(#{1,3})\s+(.*)$/))) {                            // headings
        flush(); out.push(`<h${m[1].length}>${renderInline(m[2])}</h${m[1].length}>`); continue;
      }
      if (/^\s*&gt;/.test(line)) {                                             // quotes
        flush();
        const quoted = [];
        for (; i < lines.length && /^\s*&gt;/.test(lines[i]); i++) quoted.push(lines[i].replace(/^\s*&gt; ?/, ''));
        i--;
        out.push('<blockquote>' + renderBlocks(quoted) + '</blockquote>');
        continue;
      }
      const listKinds = [['ul', /^\s*[-*+]\s+/], ['ol', /^\s*\d{1,9}[.)]\s+/]];
      const kind = listKinds.find(([, re]) => re.test(line));
      if (kind) {                                                              // lists
        flush();
        const [tag, re] = kind;
        const items = [];
        for (; i < lines.length && re.test(lines[i]); i++) items.push(`<li>${renderInline(lines[i].replace(re, ''))}</li>`);
        i--;
        out.push(`<${tag}>${items.join('')}</${tag}>`);
        continue;
      }
      if (!line.trim()) { flush(); continue; }
      para.push(line);
    }
    flush();
    return out.join('');
  }

  function linkHtml(url, label, showTarget) {
    const a = `<a href="${url}" target="_blank" rel="noopener noreferrer nofollow">${label}</a>`;
    return showTarget && label !== url ? `${a} <span class="link-target">(${url})</span>` : a;
  }

  /** Inline constructs on already-escaped text. Produced markup is parked in slots so later rules cannot touch it. */
  function renderInline(s) {
    const slots = [];
    const park = (html) => `\u0001${slots.push(html) - 1}\u0002`;
    s = s.replace(/(`{1,3})([^`\n]+)\1/g, (_, ticks, code) => park(`<code>${code}</code>`));
    s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g,
      (all, label, url) => (SAFE_URL.test(url) ? park(linkHtml(url, label, true)) : all));
    s = s.replace(/(^|[^\w/\u0001])(https?:\/\/(?:(?!&quot;|&#39;|&lt;|&gt;)[^\s\u0001\u0002])+)/gi, (all, pre, url) => {
      const trail = (url.match(/(?:[.,;:!?)\]]|&#39;)+$/) || [''])[0];
      const bare = url.slice(0, url.length - trail.length);
      return bare.length > 8 ? pre + park(linkHtml(bare, bare, false)) + trail : all;
    });
    s = s.replace(/\*\*(?=\S)([^*\n]*?\S)\*\*/g, '<strong>$1</strong>');
    s = s.replace(/(^|[^\w])__(?=\S)([^_\n]*?\S)__(?!\w)/g, '$1<strong>$2</strong>');
    s = s.replace(/~~(?=\S)([^~\n]*?\S)~~/g, '<del>$1</del>');
    s = s.replace(/(^|[^\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/g, '$1<em>$2</em>');
    s = s.replace(/(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>');
    s = s.replace(/:([a-z0-9_+-]+):/g, (all, name) => (EMOJI[name] ? `<span title=":${name}:">${EMOJI[name]}</span>` : all));
    s = s.replace(/(^|[^\w@/.\u0001])@([a-z0-9][a-z0-9._-]*)/gi, (all, pre, name) => pre + mentionHtml(name));
    for (let n = 0; n < 5 && /\u0001\d+\u0002/.test(s); n++) s = s.replace(/\u0001(\d+)\u0002/g, (_, i) => slots[+i]);
    return s;
  }

  /** Web-client style: try the whole run, then drop trailing '.', '-', '_' one at a time. */
  function mentionHtml(name) {
    const mine = S.me ? S.me.username.toLowerCase() : '';
    for (let n = name; n; n = n.slice(0, -1)) {
      const l = n.toLowerCase();
      const rest = name.slice(n.length);
      if (l === mine || l === 'all' || l === 'channel' || l === 'here') {
        return `<span class="mention" data-testid="mention">@${n}</span>${rest}`;
      }
      if ([...S.users.values()].some((u) => u.username === l)) return `<span class="mention-other">@${n}</span>${rest}`;
      if (!/[._-]$/.test(n)) break;
    }
    return '@' + name;
  }

  // ==== 5. Emoji ============================================================

  const EMOJI = {
    '+1': '👍', thumbsup: '👍', '-1': '👎', thumbsdown: '👎', eyes: '👀', white_check_mark: '✅',
    heavy_check_mark: '✔️', x: '❌', heart: '❤️', tada: '🎉', rocket: '🚀', fire: '🔥', smile: '😄',
    grinning: '😀', joy: '😂', slightly_smiling_face: '🙂', wink: '😉', thinking: '🤔', thinking_face: '🤔',
    pray: '🙏', clap: '👏', ok_hand: '👌', raised_hands: '🙌', wave: '👋', warning: '⚠️', hourglass: '⌛',
    hourglass_flowing_sand: '⏳', 100: '💯', bug: '🐛', memo: '📝', question: '❓', exclamation: '❗',
    no_entry: '⛔', no_entry_sign: '🚫', sob: '😭', confused: '😕', star: '⭐', sparkles: '✨', zap: '⚡',
    lock: '🔒', key: '🔑', robot: '🤖', robot_face: '🤖', muscle: '💪', coffee: '☕', bulb: '💡',
    pushpin: '📌', checkered_flag: '🏁', construction: '🚧', stop_sign: '🛑', red_circle: '🔴',
    large_green_circle: '🟢', large_blue_circle: '🔵', white_circle: '⚪', arrow_right: '➡️', point_up: '☝️',
    heavy_plus_sign: '➕', hammer_and_wrench: '🛠️', mag: '🔍', calendar: '📆', page_facing_up: '📄',
  };
  const PICKER_EMOJI = ['+1', 'eyes', 'white_check_mark', 'x', 'heart', 'tada', 'rocket', 'smile'];
  const emojiChar = (name) => EMOJI[name] || `:${name}:`;

  // ==== 6. Users, teams and channels (sidebar) ==============================

  /** Fetch unknown users with POST /users/ids; returns true if anything new was learnt. */
  async function ensureUsers(ids) {
    const missing = [...new Set(ids.filter((id) => id && !S.users.has(id) && !S.userMisses.has(id)))];
    if (!missing.length) return false;
    missing.forEach((id) => S.userMisses.add(id));
    try {
      const list = await api('POST', '/users/ids', missing);
      for (const u of list || []) { S.users.set(u.id, u); S.userMisses.delete(u.id); }
      return true;
    } catch (e) {
      missing.forEach((id) => S.userMisses.delete(id));
      return false;
    }
  }

  const userName = (id) => (S.users.get(id) || {}).username || (id === (S.me && S.me.id) ? S.me.username : 'unknown');

  // A DM's name is "<id>__<id>"; its label is the other user's username.
  const dmOtherId = (ch) => String(ch.name || '').split('__').find((x) => x !== S.me.id) || S.me.id;
  const channelLabel = (ch) => (ch.type === 'D' ? userName(dmOtherId(ch)) : ch.display_name || ch.name);

  let channelRefreshTimer = null;
  function scheduleChannelRefresh() {
    clearTimeout(channelRefreshTimer);
    channelRefreshTimer = setTimeout(() => loadChannels().catch((e) => showBanner('Could not refresh channels: ' + errorText(e))), 150);
  }

  async function loadChannels() {
    if (!S.team) return;
    const list = await api('GET', `/users/me/teams/${encodeURIComponent(S.team.id)}/channels`);
    S.channels = (list || []).filter((c) => !c.delete_at);
    await ensureUsers(S.channels.filter((c) => c.type === 'D').map(dmOtherId));
    renderSidebar();
    if (S.current && !channelById(S.current)) {
      S.current = null;
      const first = pickDefaultChannel();
      if (first) await selectChannel(first.id); else clearChannelView();
    }
  }

  function pickDefaultChannel() {
    const saved = sessionStorage.getItem('collegium.channel.' + S.team.id);
    return channelById(saved) || S.channels.find((c) => c.name === 'town-square')
      || sortedChannels(['O', 'P'])[0] || S.channels[0] || null;
  }

  const sortedChannels = (types) => S.channels.filter((c) => types.includes(c.type))
    .sort((a, b) => channelLabel(a).localeCompare(channelLabel(b), undefined, { sensitivity: 'base' }));

  function renderSidebar() {
    const item = (ch) => {
      const sigil = { O: '#', P: '🔒', D: '@', G: '👥' }[ch.type] || '#';
      const unread = S.unread.has(ch.id);
      return h('li', null, h('button', {
        type: 'button', class: 'channel-item' + (ch.id === S.current ? ' active' : '') + (unread ? ' unread' : ''),
        'data-testid': 'channel-' + ch.name, 'data-channel-id': ch.id, 'data-unread': unread ? 'true' : 'false',
        'data-dm-user': ch.type === 'D' ? channelLabel(ch) : null, 'aria-current': ch.id === S.current ? 'page' : null,
        onclick: () => selectChannel(ch.id) },
        h('span', { class: 'sigil', 'aria-hidden': 'true', text: sigil }),
        h('span', { class: 'label', text: channelLabel(ch) }),
        unread ? h('span', { class: 'unread-dot', 'data-testid': 'unread-mark', title: 'Unread messages' }) : null));
    };
    $('channel-list').replaceChildren(...sortedChannels(['O', 'P']).map(item));
    $('dm-list').replaceChildren(...sortedChannels(['D', 'G']).map(item));
  }

  // ==== 7. Channel view: posts, attachments, reactions, pins ================

  function clearChannelView() {
    S.posts = new Map();
    $('post-list').replaceChildren();
    $('channel-name').textContent = 'No channel';
    $('composer').disabled = true;
    $('pinned-toggle').disabled = true;
  }

  async function selectChannel(id) {
    const ch = channelById(id);
    if (!ch) return;
    S.current = id;
    S.pickerFor = null;
    S.unread.delete(id);
    S.actionErrors.clear();
    sessionStorage.setItem('collegium.channel.' + S.team.id, id);
    renderSidebar();
    $('channel-name').textContent = (ch.type === 'D' ? '@' : ch.type === 'G' ? '' : '# ') + channelLabel(ch);
    $('channel-header').textContent = ch.header || ch.purpose || '';
    const composer = $('composer');
    composer.disabled = false;
    composer.placeholder = `Write to ${ch.type === 'D' ? '@' : '~'}${channelLabel(ch)}…  (Enter sends, Shift+Enter adds a line, / for commands)`;
    $('pinned-toggle').disabled = false;
    hideComposerError();
    renderTyping();
    await loadPosts();
    if (S.pinnedOpen) loadPinned();
    composer.focus();
  }

  async function loadPosts(quiet) {
    const channelId = S.current;
    const token = ++S.loadSeq;
    if (!quiet) $('post-list').replaceChildren(h('div', { class: 'empty-note', text: 'Loading…' }));
    let list;
    try {
      list = await api('GET', `/channels/${encodeURIComponent(channelId)}/posts?page=0&per_page=60`);
    } catch (e) {
      if (token === S.loadSeq) $('post-list').replaceChildren(h('div', { class: 'error', text: 'Could not load messages: ' + errorText(e) }));
      return;
    }
    if (token !== S.loadSeq) return;
    S.posts = new Map();
    S.extra = (list && list.posts) || {};
    for (const id of (list && list.order) || []) {
      const p = S.extra[id];
      if (p) S.posts.set(p.id, p);
    }
    await ensureUsers([...S.posts.values()].map((p) => p.user_id));
    if (token !== S.loadSeq) return;
    renderPosts(!quiet);
  }

  function isShown(p) {
    if (!p || p.delete_at || p.original_id) return false;
    const t = p.type || '';
    if (t.startsWith('system_') && t !== 'system_ephemeral') return JOIN_LEAVE_TYPES.has(t);
    return true;
  }

  function visiblePosts() {
    const eph = S.ephemeral.get(S.current);
    return [...S.posts.values(), ...(eph ? eph.values() : [])].filter(isShown).sort((a, b) => (a.create_at - b.create_at) || String(a.id).localeCompare(String(b.id)));
  }

  const nearBottom = (el) => el.scrollHeight - el.scrollTop - el.clientHeight < 80;

  function renderPosts(forceBottom) {
    const list = $('post-list');
    const [stick, top, posts] = [forceBottom || nearBottom(list), list.scrollTop, visiblePosts()];
    list.replaceChildren(...(posts.length ? posts.map(renderPost)
      : [h('div', { class: 'empty-note', 'data-testid': 'no-posts', text: 'No messages yet. Say hello!' })]));
    list.scrollTop = stick ? list.scrollHeight : top;
  }

  /** Insert or update one post in the view. */
  function upsertPost(p, forceBottom) {
    if (!p || p.channel_id !== S.current) return;
    const old = S.posts.get(p.id);
    if (old && (old.update_at || 0) > (p.update_at || 0)) return;   // stale copy
    S.posts.set(p.id, p);
    refreshPostElement(p, !old, forceBottom);
  }

  function refreshPostElement(p, isNew, forceBottom) {
    const list = $('post-list');
    const el = list.querySelector(`[data-post-id="${CSS.escape(p.id)}"]`);
    if (!isNew && el && isShown(p)) {
      const stick = nearBottom(list);
      el.replaceWith(renderPost(p));
      if (stick) list.scrollTop = list.scrollHeight;
    } else {
      renderPosts(forceBottom);
    }
  }

  function renderPost(p) {
    const t = p.type || '';
    if (JOIN_LEAVE_TYPES.has(t)) {
      return h('div', { class: 'system-post', 'data-testid': 'system-post', 'data-post-id': p.id, text: p.message || t });
    }
    const eph = !!p.__ephemeral;
    const props = p.props || {};
    const author = S.users.get(p.user_id);
    const overrideName = props.from_webhook === 'true' && props.override_username;
    const isBot = (author && author.is_bot) || props.from_bot === 'true' || !!overrideName;
    const el = h('div', { class: 'post' + (eph ? ' ephemeral' : ''), 'data-testid': eph ? 'ephemeral-post' : 'post',
      'data-post-id': p.id, 'data-pinned': p.is_pinned ? 'true' : 'false' },
    h('div', { class: 'post-head' },
      h('span', { class: 'author', 'data-testid': 'post-author', text: overrideName || (eph && !author ? 'System' : userName(p.user_id)) }),
      isBot ? h('span', { class: 'bot-tag', text: 'BOT' }) : null,
      h('time', { class: 'time', datetime: new Date(p.create_at).toISOString(), title: new Date(p.create_at).toLocaleString(), text: formatTime(p.create_at) }),
      p.is_pinned ? h('span', { class: 'pinned-mark', 'data-testid': 'pinned-mark', text: '📌 Pinned' }) : null,
      p.edit_at > 0 ? h('span', { class: 'edited', 'data-testid': 'edited-mark', title: new Date(p.edit_at).toLocaleString(), text: '(edited)' }) : null),
    p.root_id ? renderReplyMark(p.root_id) : null,
    h('div', { class: 'message', 'data-testid': 'post-message', html: renderMarkdown(p.message) }),
    renderAttachments(p),
    S.actionErrors.has(p.id) ? h('p', { class: 'action-error', 'data-testid': 'action-error', role: 'alert', text: S.actionErrors.get(p.id) }) : null,
    eph ? h('div', { class: 'ephemeral-note', 'data-testid': 'ephemeral-note', text: '(only visible to you)' }) : null,
    eph ? null : renderReactions(p));
    if (!eph) {
      el.append(h('div', { class: 'post-tools' },
        h('button', { type: 'button', 'data-testid': 'react-button', title: 'Add reaction', text: '☺+', onclick: () => togglePicker(p.id) }),
        h('button', { type: 'button', 'data-testid': 'pin-toggle', text: p.is_pinned ? 'Unpin' : 'Pin', onclick: () => togglePin(p) })));
    }
    return el;
  }

  function renderReplyMark(rootId) {
    const root = S.posts.get(rootId) || S.extra[rootId];
    const snippet = root ? String(root.message || '').slice(0, 60) : '';
    return h('div', { class: 'reply-mark', text: root ? `↪ reply to @${userName(root.user_id)}: “${snippet}”` : '↪ reply in thread' });
  }

  // ---- attachments (props.attachments) and their actions ----

  const NAMED_COLOURS = { good: '#2e7d32', warning: '#e0a100', danger: '#c62828' };

  function renderAttachments(p) {
    const atts = (p.props && Array.isArray(p.props.attachments)) ? p.props.attachments : [];
    if (!atts.length) return null;
    return h('div', { class: 'attachments' }, atts.map((a) => {
      const colour = NAMED_COLOURS[a.color] || (/^#[0-9a-f]{3,8}$/i.test(a.color || '') ? a.color : null);
      const bar = h('div', { class: 'attachment-bar' });
      if (colour) bar.style.background = colour;
      const titleHtml = a.title ? (a.title_link && SAFE_URL.test(a.title_link)
        ? linkHtml(escapeHtml(a.title_link), escapeHtml(a.title), true) : escapeHtml(a.title)) : '';
      const fields = Array.isArray(a.fields) ? a.fields : [];
      return h('div', { class: 'attachment', 'data-testid': 'attachment' }, bar, h('div', { class: 'attachment-body' },
        a.pretext ? h('div', { class: 'attachment-pretext message', html: renderMarkdown(a.pretext) }) : null,
        a.author_name ? h('div', { class: 'attachment-author', text: a.author_name }) : null,
        titleHtml ? h('div', { class: 'attachment-title', html: titleHtml }) : null,
        a.text ? h('div', { class: 'attachment-text message', html: renderMarkdown(a.text) }) : null,
        fields.length ? h('div', { class: 'attachment-fields' }, fields.map((f) => h('div', { class: 'attachment-field' + (f.short ? ' short' : '') },
          f.title ? h('div', { class: 'field-title', text: f.title }) : null,
          h('div', { class: 'message', html: renderMarkdown(f.value == null ? '' : String(f.value)) })))) : null,
        a.image_url && SAFE_URL.test(a.image_url) ? h('div', { class: 'message', html: linkHtml(escapeHtml(a.image_url), 'image', true) }) : null,
        a.footer ? h('div', { class: 'attachment-footer', text: a.footer }) : null,
        Array.isArray(a.actions) && a.actions.length ? h('div', { class: 'attachment-actions' }, a.actions.map((act) => renderAction(p, act))) : null));
    }));
  }

  /** Options of a select (message action or dialog element): static, or from the users/channels we know. */
  function selectOptions(source, options) {
    if (source === 'users') return [...S.users.values()].map((u) => ({ text: u.username, value: u.id }));
    if (source === 'channels') return S.channels.filter((c) => c.type === 'O').map((c) => ({ text: c.display_name, value: c.id }));
    return Array.isArray(options) ? options : [];
  }

  function renderAction(p, act) {
    const type = act.type || 'button';
    if (type === 'select') {
      const opts = selectOptions(act.data_source, act.options);
      const sel = h('select', { class: 'action-select', 'data-testid': 'action-' + act.id, disabled: !!act.disabled },
        h('option', { value: '', text: act.name || 'Choose…' }),
        opts.map((o) => h('option', { value: o.value, text: o.text, selected: o.value === act.default_option })));
      sel.addEventListener('change', () => { if (sel.value) doAction(p, act, sel, { selected_option: sel.value }); });
      return sel;
    }
    const style = String(act.style || 'default');
    const btn = h('button', { type: 'button', class: 'action-button ' + (/^[a-z]+$/.test(style) ? style : ''),
      'data-testid': 'action-' + act.id, 'data-action-id': act.id, disabled: !!act.disabled,
      title: act.tooltip || null, text: act.name || act.id });
    if (/^#[0-9a-f]{3,8}$/i.test(style)) { btn.style.color = style; btn.style.borderColor = style; }
    btn.addEventListener('click', () => doAction(p, act, btn, {}));
    return btn;
  }

  async function doAction(p, act, control, extra) {
    control.disabled = true;
    control.classList.add('busy');
    S.actionErrors.delete(p.id);
    const postEl = control.closest('.post');
    const old = postEl && postEl.querySelector('.action-error');
    if (old) old.remove();
    const body = act.cookie ? { ...extra, cookie: act.cookie } : { ...extra };
    try {
      await api('POST', `/posts/${encodeURIComponent(p.id)}/actions/${encodeURIComponent(act.id)}`, body);
    } catch (e) {
      const msg = `Action "${act.name || act.id}" failed: ${errorText(e)}`;
      S.actionErrors.set(p.id, msg);
      const anchor = control.closest('.attachments');
      if (anchor && anchor.isConnected) anchor.after(h('p', { class: 'action-error', 'data-testid': 'action-error', role: 'alert', text: msg }));
    } finally {
      if (control.isConnected) { control.disabled = !!act.disabled; control.classList.remove('busy'); }
    }
  }

  // ---- reactions ----

  function renderReactions(p) {
    const groups = new Map();
    for (const r of ((p.metadata && p.metadata.reactions) || []).filter((x) => !x.delete_at)) {
      const g = groups.get(r.emoji_name) || { users: [], mine: false };
      g.users.push(r.user_id);
      if (r.user_id === S.me.id) g.mine = true;
      groups.set(r.emoji_name, g);
    }
    const row = h('div', { class: 'reactions', 'data-testid': 'reactions' });
    for (const [name, g] of groups) {
      row.append(h('button', {
        type: 'button', class: 'reaction' + (g.mine ? ' mine' : ''), 'data-testid': 'reaction-' + name,
        'data-mine': g.mine ? 'true' : 'false', 'aria-pressed': g.mine ? 'true' : 'false',
        title: `:${name}: by ${g.users.map(userName).join(', ')}`,
        onclick: () => toggleReaction(p, name, g.mine),
      }, emojiChar(name), h('span', { class: 'count', text: String(g.users.length) })));
    }
    if (S.pickerFor === p.id) {
      row.append(h('span', { class: 'emoji-picker', 'data-testid': 'emoji-picker' }, PICKER_EMOJI.map((name) => h('button', {
        type: 'button', 'data-testid': 'emoji-' + name, title: `:${name}:`, text: emojiChar(name),
        onclick: () => { S.pickerFor = null; const g = groups.get(name); toggleReaction(p, name, !!(g && g.mine)); },
      }))));
    } else if (groups.size) {
      row.append(h('button', { type: 'button', class: 'reaction', 'data-testid': 'reaction-add', title: 'Add reaction', text: '+', onclick: () => togglePicker(p.id) }));
    }
    return groups.size || S.pickerFor === p.id ? row : null;
  }

  function togglePicker(postId) {
    const prev = S.pickerFor;
    S.pickerFor = prev === postId ? null : postId;
    for (const id of [prev, S.pickerFor]) { if (id && S.posts.has(id)) refreshPostElement(S.posts.get(id), false); }
  }

  async function toggleReaction(p, name, mine) {
    try {
      if (mine) await api('DELETE', `/users/me/posts/${encodeURIComponent(p.id)}/reactions/${encodeURIComponent(name)}`);
      else await api('POST', '/reactions', { user_id: S.me.id, post_id: p.id, emoji_name: name });
      applyReaction({ user_id: S.me.id, post_id: p.id, emoji_name: name, create_at: Date.now() }, !mine);
    } catch (e) {
      showBanner(`Could not ${mine ? 'remove' : 'add'} reaction :${name}: — ${errorText(e)}`);
      refreshPostElement(p, false);
    }
  }

  function applyReaction(r, added) {
    const p = r && S.posts.get(r.post_id);
    if (!p) return;
    p.metadata = p.metadata || {};
    const list = (p.metadata.reactions || []).filter((x) => !(x.user_id === r.user_id && x.emoji_name === r.emoji_name));
    if (added) list.push(r);
    p.metadata.reactions = list;
    p.has_reactions = list.length > 0;
    refreshPostElement(p, false);
  }

  // ---- pins ----

  async function togglePin(p) {
    try {
      await api('POST', `/posts/${encodeURIComponent(p.id)}/${p.is_pinned ? 'unpin' : 'pin'}`);
      const cur = S.posts.get(p.id);
      if (cur) { cur.is_pinned = !p.is_pinned; refreshPostElement(cur, false); }
      if (S.pinnedOpen) loadPinned();
    } catch (e) {
      showBanner('Could not change pin: ' + errorText(e));
    }
  }

  function setPinnedOpen(open) {
    S.pinnedOpen = open;
    $('pinned-toggle').setAttribute('aria-pressed', open ? 'true' : 'false');
    $('pinned-panel').hidden = !open;
    if (open) loadPinned();
  }

  async function loadPinned() {
    const channelId = S.current;
    const box = $('pinned-items');
    if (!channelId) return;
    try {
      const list = await api('GET', `/channels/${encodeURIComponent(channelId)}/pinned`);
      if (channelId !== S.current) return;
      const posts = ((list && list.order) || []).map((id) => list.posts[id]).filter((p) => p && !p.delete_at)
        .sort((a, b) => b.create_at - a.create_at);
      await ensureUsers(posts.map((p) => p.user_id));
      box.replaceChildren(...(posts.length ? posts.map((p) => h('div', {
        class: 'pinned-item', 'data-testid': 'pinned-item', 'data-post-id': p.id, tabindex: '0',
        onclick: () => jumpToPost(p.id),
      }, h('div', { class: 'meta', text: `${userName(p.user_id)} · ${formatTime(p.create_at)}` }),
      h('div', { class: 'message', html: renderMarkdown(p.message) })))
        : [h('div', { class: 'empty-note', 'data-testid': 'no-pinned', text: 'No pinned messages in this channel.' })]));
    } catch (e) {
      box.replaceChildren(h('div', { class: 'error', text: 'Could not load pinned messages: ' + errorText(e) }));
    }
  }

  function jumpToPost(id) {
    const el = $('post-list').querySelector(`[data-post-id="${CSS.escape(id)}"]`);
    if (!el) { showBanner('That message is older than the loaded history.'); return; }
    el.scrollIntoView({ block: 'center' });
    el.classList.remove('highlight');
    void el.offsetWidth;                                     // restart the CSS animation
    el.classList.add('highlight');
  }

  // ==== 8. Composer, slash commands, autocomplete, typing ===================

  function showComposerError(text) { Object.assign($('composer-error'), { textContent: text, hidden: false }); }
  function hideComposerError() { $('composer-error').hidden = true; }

  function autosize() {
    const c = $('composer');
    c.style.height = 'auto';
    c.style.height = Math.min(c.scrollHeight + 2, 220) + 'px';
  }

  async function sendComposer() {
    const c = $('composer');
    const text = c.value;
    if (!text.trim() || !S.current) return;
    hideComposerError();
    hideAutocomplete();
    if (text.trim().startsWith('/')) return executeCommand(text.trim());
    c.value = '';
    autosize();
    S.lastTypingSent = 0;
    try {
      const body = { channel_id: S.current, message: text, pending_post_id: `${S.me.id}:${Date.now()}` };
      upsertPost(await api('POST', '/posts', body), true);
    } catch (e) {
      showComposerError('Message not sent: ' + errorText(e));
      if (!c.value) { c.value = text; autosize(); }
    }
  }

  async function executeCommand(command) {
    const c = $('composer');
    c.disabled = true;
    try {
      await api('POST', '/commands/execute', { command, channel_id: S.current, team_id: S.team.id });
      c.value = '';
      autosize();
    } catch (e) {
      showComposerError(`Command ${command.split(/\s/)[0]} failed: ${errorText(e)}`);
    } finally {
      c.disabled = !S.current;
      c.focus();
    }
  }

  function maybeSendTyping() {
    const text = $('composer').value;
    const now = Date.now();
    if (!text || text.startsWith('/') || !S.current || now - S.lastTypingSent < 3000) return;
    if (wsSend('user_typing', { channel_id: S.current, parent_id: '' })) S.lastTypingSent = now;
  }

  function onTyping(userId, channelId) {
    if (!userId || userId === S.me.id) return;
    clearTimeout((S.typing.get(userId) || {}).timer);
    const timer = setTimeout(() => { S.typing.delete(userId); renderTyping(); }, 5000);
    S.typing.set(userId, { channel: channelId, timer });
    ensureUsers([userId]).then((n) => n && renderTyping());
    renderTyping();
  }

  function stopTyping(userId) {
    if (S.typing.has(userId)) { clearTimeout(S.typing.get(userId).timer); S.typing.delete(userId); renderTyping(); }
  }

  function renderTyping() {
    const names = [...S.typing.entries()].filter(([, t]) => t.channel === S.current).map(([id]) => userName(id));
    $('typing').textContent = !names.length ? ''
      : names.length === 1 ? `${names[0]} is typing…`
        : names.length <= 3 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} are typing…`
          : 'Several people are typing…';
  }

  // ---- slash command autocomplete ----

  async function loadCommands() {
    S.commands = [];
    try {
      const list = await api('GET', `/teams/${encodeURIComponent(S.team.id)}/commands/autocomplete`);
      S.commands = (list || []).filter((c) => c && c.trigger && c.auto_complete !== false && !c.delete_at)
        .sort((a, b) => a.trigger.localeCompare(b.trigger));
    } catch (e) {
      S.commands = null;                                   // retried on the next "/"
    }
  }

  async function updateAutocomplete() {
    if (!/^\/\S*$/.test($('composer').value)) return hideAutocomplete();
    if (S.commands === null) await loadCommands();
    const m = $('composer').value.match(/^\/(\S*)$/);             // re-read: the text may have changed meanwhile
    if (!m || !S.commands) return hideAutocomplete();
    const prefix = m[1].toLowerCase();
    S.acItems = S.commands.filter((c) => c.trigger.toLowerCase().startsWith(prefix));
    if (!S.acItems.length) return hideAutocomplete();
    S.acIndex = Math.min(S.acIndex, S.acItems.length - 1);
    renderAutocomplete();
  }

  function renderAutocomplete() {
    const ul = $('autocomplete');
    ul.replaceChildren(...S.acItems.map((c, i) => h('li', {
      role: 'option', class: i === S.acIndex ? 'selected' : '', 'aria-selected': i === S.acIndex ? 'true' : 'false',
      'data-testid': 'autocomplete-item', 'data-trigger': c.trigger,
      onmousedown: (ev) => { ev.preventDefault(); S.acIndex = i; completeAutocomplete(); },
    }, h('span', { class: 'trigger', text: '/' + c.trigger }),
    c.auto_complete_hint ? h('span', { class: 'hint', text: c.auto_complete_hint }) : null,
    h('span', { class: 'desc', text: c.auto_complete_desc || c.description || '' }))));
    ul.hidden = false;
    const sel = ul.children[S.acIndex];
    if (sel) sel.scrollIntoView({ block: 'nearest' });
  }

  function hideAutocomplete() { $('autocomplete').hidden = true; S.acItems = []; S.acIndex = 0; }

  function completeAutocomplete() {
    const c = S.acItems[S.acIndex];
    if (c) $('composer').value = '/' + c.trigger + ' ';
    hideAutocomplete();
    $('composer').focus();
  }

  function onComposerKey(ev) {
    const acOpen = !$('autocomplete').hidden && S.acItems.length;
    if (acOpen && (ev.key === 'ArrowDown' || ev.key === 'ArrowUp')) {
      ev.preventDefault();
      S.acIndex = (S.acIndex + (ev.key === 'ArrowDown' ? 1 : S.acItems.length - 1)) % S.acItems.length;
      return renderAutocomplete();
    }
    if (acOpen && ev.key === 'Escape') { ev.preventDefault(); return hideAutocomplete(); }
    if (acOpen && ev.key === 'Tab') { ev.preventDefault(); return completeAutocomplete(); }
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      const sel = acOpen && S.acItems[S.acIndex];
      if (sel && $('composer').value.trim() !== '/' + sel.trigger) return completeAutocomplete();
      sendComposer();
    }
  }

  // ==== 9. Interactive dialogs ==============================================

  const TEXT_SUBTYPES = new Set(['email', 'number', 'password', 'tel', 'url']);

  function openDialog(payload) {
    const d = payload.dialog || {};
    S.dialog = payload;
    $('dialog-title').textContent = d.title || 'Dialog';
    $('dialog-intro').innerHTML = d.introduction_text ? renderMarkdown(d.introduction_text) : '';
    $('dialog-intro').hidden = !d.introduction_text;
    $('dialog-submit').textContent = d.submit_label || 'Submit';
    $('dialog-fields').replaceChildren(...(Array.isArray(d.elements) ? d.elements : []).map(renderDialogElement));
    setDialogError('');
    setDialogBusy(false);
    $('dialog-backdrop').hidden = false;
    ($('dialog-fields').querySelector('input, textarea, select') || $('dialog-submit')).focus();
  }

  function renderDialogElement(e) {
    const name = String(e.name || '');
    const id = 'dlg-' + name.replace(/[^A-Za-z0-9_-]/g, '_');
    const testid = 'dialog-field-' + name;
    const def = e.default == null ? '' : String(e.default);
    const label = [e.display_name || name, e.optional ? h('span', { class: 'optional', text: ' (optional)' }) : null];
    let control;
    switch (e.type) {
      case 'textarea':
        control = h('textarea', { id, name, 'data-testid': testid, placeholder: e.placeholder || null, maxlength: e.max_length || 3000, rows: '4' });
        break;
      case 'select':
        control = h('select', { id, name, 'data-testid': testid },
          h('option', { value: '', text: e.placeholder || 'Select an option…' }),
          selectOptions(e.data_source, e.options).map((o) => h('option', { value: o.value, text: o.text })));
        break;
      case 'bool':
        control = h('label', { class: 'bool-option' },
          h('input', { type: 'checkbox', id, name, 'data-testid': testid, checked: def === 'true' }),
          h('span', { text: e.placeholder || e.display_name || name }));
        break;
      case 'radio':
        control = h('fieldset', { 'data-testid': testid, role: 'radiogroup' }, (e.options || []).map((o) => h('label', { class: 'radio-option' },
          h('input', { type: 'radio', name: id, value: o.value, 'data-testid': `${testid}-${o.value}`, checked: o.value === def }),
          h('span', { text: o.text }))));
        break;
      default: {
        const type = e.type === 'date' ? 'date' : e.type === 'datetime' ? 'datetime-local' : TEXT_SUBTYPES.has(e.subtype) ? e.subtype : 'text';
        control = h('input', { type, id, name, 'data-testid': testid, placeholder: e.placeholder || null, maxlength: e.max_length || 150 });
      }
    }
    if ('value' in control && e.type !== 'bool') control.value = def;
    return h('div', { class: 'dialog-field', 'data-field': name },
      e.type === 'radio' || e.type === 'bool' ? h('div', { class: 'field-label', text: '' }, h('strong', null, label)) : h('label', { for: id }, label),
      control,
      e.help_text ? h('div', { class: 'help message', html: renderMarkdown(e.help_text) }) : null,
      h('div', { class: 'field-error', 'data-testid': 'dialog-error-' + name, hidden: true }));
  }

  function dialogValue(e) {
    const box = $('dialog-fields').querySelector(`[data-field="${CSS.escape(String(e.name))}"]`);
    if (!box) return '';
    if (e.type === 'bool') return box.querySelector('input').checked;
    if (e.type === 'radio') { const r = box.querySelector('input:checked'); return r ? r.value : ''; }
    const v = box.querySelector('input, textarea, select').value;
    if (e.subtype === 'number' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
    return v;
  }

  function validateDialog(elements) {
    const errors = {};
    for (const e of elements) {
      const v = dialogValue(e);
      const s = typeof v === 'string' ? v.trim() : v;
      if (!e.optional && e.type !== 'bool' && (s === '' || s === null)) errors[e.name] = 'This field is required.';
      else if (typeof v === 'string' && v && e.min_length && v.length < e.min_length) errors[e.name] = `Must be at least ${e.min_length} characters.`;
      else if (typeof v === 'string' && v && e.max_length && v.length > e.max_length) errors[e.name] = `Must be at most ${e.max_length} characters.`;
      else if (e.subtype === 'number' && typeof v === 'string' && v.trim()) errors[e.name] = 'Must be a number.';
    }
    return errors;
  }

  function showFieldErrors(errors) {
    for (const box of $('dialog-fields').querySelectorAll('.dialog-field')) {
      const msg = errors[box.dataset.field];
      Object.assign(box.querySelector('.field-error'), { textContent: msg || '', hidden: !msg });
      box.classList.toggle('invalid', !!msg);
    }
  }

  function setDialogError(text) { Object.assign($('dialog-error'), { textContent: text || '', hidden: !text }); }
  function setDialogBusy(busy) { $('dialog-submit').disabled = busy; $('dialog-cancel').disabled = busy; }
  function closeDialog() { S.dialog = null; $('dialog-backdrop').hidden = true; $('composer').focus(); }

  function dialogRequest(payload, submission, cancelled) {
    const d = payload.dialog || {};
    return api('POST', '/actions/dialogs/submit', { url: payload.url, callback_id: d.callback_id || '', state: d.state || '',
      user_id: S.me.id, channel_id: S.current || '', team_id: S.team ? S.team.id : '', submission, cancelled });
  }

  async function submitDialog(ev) {
    ev.preventDefault();
    const payload = S.dialog;
    if (!payload) return;
    const elements = Array.isArray(payload.dialog.elements) ? payload.dialog.elements : [];
    const local = validateDialog(elements);
    showFieldErrors(local);
    setDialogError('');
    if (Object.keys(local).length) return;
    const submission = {};
    for (const e of elements) submission[e.name] = dialogValue(e);
    setDialogBusy(true);
    try {
      const resp = await dialogRequest(payload, submission, false);
      if (S.dialog !== payload) return;
      const errors = (resp && typeof resp === 'object' && resp.errors) || {};
      const general = resp && typeof resp === 'object' && resp.error;
      if (general || Object.keys(errors).length) {
        showFieldErrors(errors);
        const known = new Set(elements.map((e) => e.name));
        const stray = Object.entries(errors).filter(([k]) => !known.has(k)).map(([k, v]) => `${k}: ${v}`);
        setDialogError([general, ...stray].filter(Boolean).join(' · ') || '');
        return;
      }
      closeDialog();
    } catch (e) {
      if (S.dialog === payload) setDialogError('Submission failed: ' + errorText(e));
    } finally {
      if (S.dialog === payload) setDialogBusy(false);
    }
  }

  function cancelDialog() {
    const payload = S.dialog;
    if (!payload) return;
    closeDialog();
    if (payload.dialog && payload.dialog.notify_on_cancel) {
      dialogRequest(payload, {}, true).catch((e) => showBanner('Cancel notification failed: ' + errorText(e)));
    }
  }

  // ==== 10. WebSocket =======================================================

  const WS = {
    sock: null, seq: 1, expected: 0, connId: '', hadHello: false,
    failures: 0, pingTimer: null, pingSeq: 0, pingPending: false, retryTimer: null, wanted: false,
  };

  function setWsState(state) {
    $('ws-status').dataset.state = state;
    $('ws-status').textContent = { connected: 'connected', connecting: 'connecting…', offline: 'offline' }[state];
  }

  function wsConnect() {
    clearTimeout(WS.retryTimer);
    if (!WS.wanted || !S.token) return;
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}/api/v4/websocket?connection_id=${encodeURIComponent(WS.connId)}&sequence_number=${WS.expected}`;
    setWsState('connecting');
    let sock;
    try { sock = new WebSocket(url); } catch (e) { wsScheduleReconnect(); return; }
    WS.sock = sock;
    WS.seq = 1;
    WS.pingPending = false;
    sock.onopen = () => {
      if (sock !== WS.sock) return;
      wsSend('authentication_challenge', { token: S.token });
      wsPing();
      clearInterval(WS.pingTimer);
      WS.pingTimer = setInterval(() => {
        if (WS.pingPending) { wsDrop(4000, 'ping timeout'); return; }
        wsPing();
      }, 30000);
    };
    sock.onmessage = (ev) => { const msg = sock === WS.sock && parseJson(ev.data); if (msg) handleFrame(msg); };
    sock.onclose = () => {
      if (sock !== WS.sock) return;
      WS.sock = null;
      clearInterval(WS.pingTimer);
      setWsState('offline');
      if (WS.wanted) wsScheduleReconnect();
    };
  }

  /** Send a client request; returns its seq, or 0 if the socket is not open. */
  function wsSend(action, data) {
    const sock = WS.sock;
    if (!sock || sock.readyState !== WebSocket.OPEN) return 0;
    const seq = WS.seq++;
    sock.send(JSON.stringify(data === undefined ? { seq, action } : { seq, action, data }));
    return seq;
  }

  function wsPing() { WS.pingSeq = wsSend('ping'); WS.pingPending = !!WS.pingSeq; }

  function wsDrop(code, reason) {
    const sock = WS.sock;
    if (!sock) return;
    try { sock.close(code, reason); } catch { /* ignore */ }
    sock.onclose = null;
    WS.sock = null;
    clearInterval(WS.pingTimer);
    setWsState('offline');
    if (WS.wanted) wsScheduleReconnect();
  }

  function wsScheduleReconnect() {
    clearTimeout(WS.retryTimer);
    const n = WS.failures++;
    const base = n === 0 ? 1000 : Math.min(3000 * 2 ** (n - 1), 60000);
    const delay = base + Math.random() * 1000;
    setWsState('connecting');
    WS.retryTimer = setTimeout(async () => {
      try { await api('GET', '/users/me'); } catch (e) { if (e instanceof ApiError && e.status === 401) return; }
      wsConnect();
    }, delay);
  }

  function wsClose() {
    WS.wanted = false;
    clearTimeout(WS.retryTimer);
    clearInterval(WS.pingTimer);
    const sock = WS.sock;
    WS.sock = null;
    if (sock) { sock.onclose = null; try { sock.close(1000); } catch { /* ignore */ } }
    Object.assign(WS, { expected: 0, connId: '', hadHello: false, failures: 0 });
    setWsState('offline');
  }

  function handleFrame(msg) {
    if (msg.seq_reply) {                                    // response to one of our requests
      if (msg.seq_reply === WS.pingSeq) WS.pingPending = false;
      if (msg.status === 'FAIL') console.warn('websocket request failed', msg);
      return;
    }
    if (!msg.event) return;
    if (msg.event === 'hello') {
      const cid = (msg.data && msg.data.connection_id) || '';
      if (cid !== WS.connId) {
        const missed = WS.hadHello;
        WS.connId = cid;
        WS.expected = 0;
        if (missed) resync();
      }
      WS.hadHello = true;
      WS.failures = 0;
      setWsState('connected');
    }
    if (msg.seq !== WS.expected) {
      console.warn(`websocket sequence gap: expected ${WS.expected}, got ${msg.seq}; reconnecting`);
      wsDrop(4001, 'missed events');
      return;
    }
    WS.expected = msg.seq + 1;
    try { onEvent(msg); } catch (e) { console.error('event handler failed', msg.event, e); }
  }

  /** After a reconnect events may have been lost: re-read channels and the open channel. */
  async function resync() {
    try {
      await loadChannels();
      if (S.current) { await loadPosts(true); if (S.pinnedOpen) loadPinned(); }
    } catch (e) {
      showBanner('Resync failed: ' + errorText(e));
    }
  }

  function onEvent(msg) {
    const d = msg.data || {};
    const b = msg.broadcast || {};
    switch (msg.event) {
      case 'posted': onPosted(parseJson(d.post)); break;
      case 'post_edited': onPostEdited(parseJson(d.post)); break;
      case 'post_deleted': onPostDeleted(parseJson(d.post)); break;
      case 'reaction_added': applyReaction(parseJson(d.reaction), true); break;
      case 'reaction_removed': applyReaction(parseJson(d.reaction), false); break;
      case 'typing': onTyping(d.user_id, b.channel_id || d.channel_id); break;
      case 'ephemeral_message': onEphemeral(parseJson(d.post)); break;
      case 'open_dialog': { const p = parseJson(d.dialog); if (p && p.dialog) openDialog(p); break; }
      case 'user_added': case 'user_removed':                // refresh when it concerns me
        if ((d.user_id || b.user_id) === S.me.id) scheduleChannelRefresh();
        break;
      case 'direct_added': case 'group_added': case 'channel_updated': case 'channel_deleted':
      case 'channel_restored': case 'added_to_team':
        scheduleChannelRefresh();
        break;
      default: break;                                        // unknown events are ignored
    }
  }

  function onPosted(p) {
    if (!p) return;
    if (!channelById(p.channel_id)) scheduleChannelRefresh();
    if (p.channel_id === S.current) {
      stopTyping(p.user_id);
      const known = S.users.has(p.user_id);
      upsertPost(p, p.user_id === S.me.id);
      if (!known) ensureUsers([p.user_id]).then((n) => n && refreshPostElement(S.posts.get(p.id) || p, false));
    } else if (p.user_id !== S.me.id && isShown(p)) {
      S.unread.add(p.channel_id);
      renderSidebar();
    }
  }

  function onPostEdited(p) {
    if (!p || p.channel_id !== S.current) return;
    if (S.posts.has(p.id)) upsertPost(p);
    if (S.pinnedOpen) loadPinned();
  }

  function onPostDeleted(p) {
    if (!p || p.channel_id !== S.current) return;
    S.posts.delete(p.id);                                   // soft-deleted: just drop it
    renderPosts();
    if (S.pinnedOpen) loadPinned();
  }

  function onEphemeral(p) {
    if (!p || !p.channel_id) return;
    p.__ephemeral = true;
    p.type = p.type || 'system_ephemeral';
    p.create_at = p.create_at || Date.now();
    if (!S.ephemeral.has(p.channel_id)) S.ephemeral.set(p.channel_id, new Map());
    S.ephemeral.get(p.channel_id).set(p.id || `eph-${Date.now()}`, p);
    if (p.channel_id === S.current) renderPosts(true);
    else { S.unread.add(p.channel_id); renderSidebar(); }
  }

  // ==== 11. Session: sign in, sign out, start-up ============================

  function showLogin(message) {
    $('app-view').hidden = true;
    $('login-view').hidden = false;
    Object.assign($('login-error'), { textContent: message || '', hidden: !message });
    $('login-submit').disabled = false;
    $('login-username').focus();
  }

  async function login(ev) {
    ev.preventDefault();
    const btn = $('login-submit');
    const err = $('login-error');
    btn.disabled = err.hidden = true;
    try {
      const res = await fetch('/api/v4/users/login', {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
        body: JSON.stringify({ login_id: $('login-username').value.trim(), password: $('login-password').value }),
      });
      const body = parseJson(await res.text());
      if (!res.ok) {
        throw new Error(res.status === 401 ? 'Wrong username or password.'
          : `Sign-in failed: ${(body && body.message) || 'HTTP ' + res.status}`);
      }
      const token = res.headers.get('Token');
      if (!token) throw new Error('Sign-in failed: the server sent no Token header.');
      S.token = token;
      sessionStorage.setItem(TOKEN_KEY, token);
      S.me = body;
      $('login-password').value = '';
      await startApp();
    } catch (e) {
      Object.assign(err, { textContent: e.message || String(e), hidden: false });
      btn.disabled = false;
    }
  }

  function resetState() {
    Object.assign(S, {
      token: null, me: null, teams: [], team: null, channels: [], current: null, posts: new Map(), extra: {},
      ephemeral: new Map(), unread: new Set(), actionErrors: new Map(), commands: null, dialog: null, pickerFor: null,
    });
    S.users.clear();
    S.userMisses.clear();
    S.typing.forEach((t) => clearTimeout(t.timer));
    S.typing.clear();
    $('dialog-backdrop').hidden = true;
  }

  async function signOut(message) {
    wsClose();
    if (S.token && !message) { try { await api('POST', '/users/logout'); } catch { /* ignore */ } }
    sessionStorage.removeItem(TOKEN_KEY);
    resetState();
    showLogin(message);
  }

  function sessionExpired() {
    if (!S.me) return;
    signOut('Your session has expired. Please sign in again.');
  }

  async function startApp() {
    S.users.set(S.me.id, S.me);
    $('login-view').hidden = true;
    $('app-view').hidden = false;
    $('me-name').textContent = '@' + S.me.username;
    S.teams = (await api('GET', '/users/me/teams').catch((e) => showBanner('Could not load teams: ' + errorText(e)))) || [];
    const sel = $('team-select');
    sel.replaceChildren(...S.teams.map((t) => h('option', { value: t.id, text: t.display_name || t.name })));
    sel.hidden = S.teams.length < 2;
    $('team-name').hidden = !sel.hidden;              // the selector replaces the heading
    WS.wanted = true;
    wsConnect();
    if (!S.teams.length) {
      $('team-name').textContent = 'No team';
      showBanner('You are not a member of any team.');
    } else {
      const saved = sessionStorage.getItem('collegium.team');
      await selectTeam(S.teams.find((t) => t.id === saved) || S.teams[0]);
    }
  }

  async function selectTeam(team) {
    S.team = team;
    S.current = null;
    S.commands = null;
    S.unread.clear();
    sessionStorage.setItem('collegium.team', team.id);
    $('team-select').value = team.id;
    $('team-name').textContent = team.display_name || team.name;
    try {
      await loadChannels();
    } catch (e) {
      showBanner('Could not load channels: ' + errorText(e));
      return;
    }
    const first = pickDefaultChannel();
    if (first) await selectChannel(first.id); else clearChannelView();
  }

  function wireEvents() {
    $('login-form').addEventListener('submit', login);
    $('logout').addEventListener('click', () => signOut());
    $('team-select').addEventListener('change', (ev) => selectTeam(S.teams.find((x) => x.id === ev.target.value) || S.team));
    $('pinned-toggle').addEventListener('click', () => setPinnedOpen(!S.pinnedOpen));
    const c = $('composer');
    c.addEventListener('keydown', onComposerKey);
    c.addEventListener('input', () => { hideComposerError(); autosize(); updateAutocomplete(); maybeSendTyping(); });
    c.addEventListener('blur', () => setTimeout(hideAutocomplete, 150));
    $('dialog').addEventListener('submit', submitDialog);
    $('dialog-cancel').addEventListener('click', cancelDialog);
    $('dialog').addEventListener('keydown', (ev) => { if (ev.key === 'Escape') { ev.preventDefault(); cancelDialog(); } });
    window.addEventListener('online', () => { if (WS.wanted && !WS.sock) { WS.failures = 0; wsConnect(); } });
  }

  async function boot() {
    wireEvents();
    S.token = sessionStorage.getItem(TOKEN_KEY);
    if (!S.token) return showLogin();
    try {
      S.me = await api('GET', '/users/me');
      await startApp();
    } catch (e) {
      sessionStorage.removeItem(TOKEN_KEY);
      resetState();
      showLogin(e instanceof ApiError && e.status === 401 ? '' : 'Could not resume the session: ' + errorText(e));
    }
  }

  boot();
})();
