#!/usr/bin/env python3
"""Drive a Mattermost API v4 server (the Collegium simulator) with the
third-party PyPI client `mattermostdriver`, asserting results as it goes.

Usage:
    python3 drive_simulator.py --url http://127.0.0.1:PORT

The server must be fresh (no users yet): the script creates the first account,
which the server makes a system admin.  Every check prints one `ok: ...` line;
the first failure prints `FAIL: ...` and the script exits with status 1.
The last line is `python-driver: N passed, F failed`.

Everything goes through mattermostdriver (its endpoint classes, its login and
its websocket).  The only request without a dedicated driver method is the
config patch that enables bot creation, sent with the driver's own generic
`client.put`, and only if the server refuses `POST /bots` with 403.
"""

import argparse
import asyncio
import json
import logging
import os
import re
import sys
import threading
import time
import urllib.parse

try:
    import requests
    from mattermostdriver import Driver
    from mattermostdriver.endpoints.bots import Bots
    from mattermostdriver.exceptions import (
        NoAccessTokenProvided,
        NotEnoughPermissions,
        ResourceNotFound,
    )
except ImportError as import_error:  # pragma: no cover - environment problem
    print(
        "FAIL: cannot import mattermostdriver ({}); install requirements.txt "
        "next to this script".format(import_error),
        file=sys.stderr,
    )
    sys.exit(2)


ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "Admin-pass-1234"
ADMIN_EMAIL = "admin@example.com"
TEAM_NAME = "drivers"
CHANNEL_NAME = "driven"
BOT_USERNAME = "driverbot"
FILE_NAME = "driven.txt"
FILE_BYTES = b"uploaded by mattermostdriver\n"
ID_RE = re.compile(r"^[a-z0-9]{26}$")


class CheckFailed(Exception):
    """An assertion about the server's behaviour did not hold."""


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def check_eq(actual, expected, what):
    if actual != expected:
        raise CheckFailed("{}: expected {!r}, got {!r}".format(what, expected, actual))


def check_id(value, what):
    if not isinstance(value, str) or not ID_RE.match(value):
        raise CheckFailed("{}: expected a 26-character lowercase id, got {!r}".format(what, value))


def as_json(result, what):
    """mattermostdriver's GET helper only parses bodies whose Content-Type is
    exactly 'application/json'; otherwise it hands back the raw Response."""
    if isinstance(result, requests.Response):
        raise CheckFailed(
            "{}: driver did not parse the body as JSON (HTTP {}, Content-Type {!r}); "
            "mattermostdriver requires Content-Type to be exactly 'application/json'".format(
                what, result.status_code, result.headers.get("Content-Type")
            )
        )
    return result


class _DropMisleadingAuthLog(logging.Filter):
    """mattermostdriver logs 'Websocket authentification failed' for every frame
    that arrives before `hello` - including the normal challenge reply.  It is
    not a failure; hide it so the output is not misleading."""

    def filter(self, record):
        return "authentification failed" not in record.getMessage()


class quiet_driver_errors:
    """The driver logs every HTTP error at ERROR level (logger
    'mattermostdriver.websocket'); silence it around errors we provoke."""

    def __enter__(self):
        self.logger = logging.getLogger("mattermostdriver.websocket")
        self.level = self.logger.level
        self.logger.setLevel(logging.CRITICAL)

    def __exit__(self, *exc):
        self.logger.setLevel(self.level)
        return False


class Report:
    def __init__(self):
        self.passed = 0

    def ok(self, message):
        self.passed += 1
        print("ok: {}".format(message), flush=True)


class WebsocketCollector:
    """Runs Driver.init_websocket in a background thread and records frames."""

    def __init__(self, driver):
        self.driver = driver
        self.lock = threading.Lock()
        self.frames = []  # (raw, parsed) in arrival order
        self.hello = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._run, name="mm-websocket", daemon=True)

    async def _handle(self, message):
        # mattermostdriver passes the raw frame text to the handler, responses
        # (seq_reply) and events alike.
        try:
            parsed = json.loads(message)
        except ValueError:
            parsed = None
        with self.lock:
            self.frames.append((message, parsed))
        if isinstance(parsed, dict) and parsed.get("event") == "hello":
            self.hello.set()

    def _run(self):
        # init_websocket uses asyncio.get_event_loop(); a non-main thread has
        # no loop until we set one.
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self.driver.init_websocket(self._handle)
        except BaseException as exc:  # noqa: BLE001 - reported to the main thread
            self.error = exc
        finally:
            # Driver.disconnect() only ends the receive loop: the driver never
            # closes the socket, and the websockets keepalive task is left
            # pending.  Cancel leftovers so the loop closes quietly.
            try:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            except Exception:  # noqa: BLE001
                pass
            finally:
                loop.close()

    def start(self):
        self.thread.start()

    def snapshot(self):
        with self.lock:
            return list(self.frames)

    def events(self):
        return [p for _, p in self.snapshot() if isinstance(p, dict) and "event" in p]

    def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self.events()):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def stop(self, timeout):
        if self.driver.websocket is not None:
            self.driver.disconnect()
        self.thread.join(timeout)


def driver_options(base, **extra):
    options = {
        "scheme": base["scheme"],
        "url": base["host"],
        "port": base["port"],
        "basepath": base["basepath"],
        "verify": True,
        "request_timeout": base["request_timeout"],
        "timeout": base["ws_timeout"],
        "keepalive": False,
    }
    options.update(extra)
    return options


def parse_url(url, request_timeout, ws_timeout):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SystemExit("--url must look like http://127.0.0.1:PORT (got {!r})".format(url))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {
        "scheme": parts.scheme,
        "host": parts.hostname,
        "port": port,
        "basepath": parts.path.rstrip("/") + "/api/v4",
        "request_timeout": request_timeout,
        "ws_timeout": ws_timeout,
    }


def bypass_proxy_for(host):
    # requests and websockets both honour *_proxy variables; a local
    # simulator must be reached directly.
    for var in ("NO_PROXY", "no_proxy"):
        current = os.environ.get(var, "")
        entries = [e for e in current.split(",") if e]
        if host not in entries:
            entries.append(host)
        os.environ[var] = ",".join(entries)


def run(args, report, state):
    base = parse_url(args.url, args.request_timeout, args.ws_timeout)
    bypass_proxy_for(base["host"])
    st = state

    # ---- (0) the server answers ---------------------------------------------
    st["step"] = "0 ping"
    anon = Driver(driver_options(base))
    deadline = time.monotonic() + args.wait
    while True:
        try:
            ping = anon.system.check_system_health()
            break
        except requests.ConnectionError as exc:
            if time.monotonic() >= deadline:
                raise CheckFailed("server at {} not reachable: {}".format(args.url, exc))
            time.sleep(0.2)
    ping = as_json(ping, "GET /system/ping")
    check_eq(ping.get("status"), "OK", "GET /system/ping status")
    report.ok("GET /system/ping answered {\"status\":\"OK\"}")

    # ---- (a) first user, then log in as that admin --------------------------
    st["step"] = "a first user and login"
    try:
        user = anon.users.create_user(
            {
                "email": ADMIN_EMAIL,
                "username": ADMIN_USERNAME,
                "password": ADMIN_PASSWORD,
                "first_name": "Ada",
                "last_name": "Admin",
            }
        )
    except requests.HTTPError as exc:
        raise CheckFailed(
            "POST /api/v4/users without a session was refused ({}: {}); the first account on a "
            "fresh server must be allowed (is the server fresh?)".format(type(exc).__name__, exc)
        )
    check_id(user.get("id"), "created user id")
    check_eq(user.get("username"), ADMIN_USERNAME, "created user username")
    roles = (user.get("roles") or "").split()
    check("system_admin" in roles, "first user must be system_admin, roles={!r}".format(user.get("roles")))
    check(not user.get("password"), "created user must be sanitised (password present)")
    admin_id = user["id"]
    st["admin_id"] = admin_id
    report.ok("POST /users without a session created first user 'admin' with roles {!r}".format(user["roles"]))

    wrong = Driver(driver_options(base, login_id=ADMIN_USERNAME, password="not-the-password"))
    try:
        with quiet_driver_errors():
            wrong.login()
        raise CheckFailed("login with a wrong password succeeded")
    except NoAccessTokenProvided as exc:
        message = str(exc)
        check(message and not message.startswith("{"),
              "401 error body must carry a 'message' field (driver shows {!r})".format(message))
    check_eq(wrong.client.token, "", "token after failed login")
    report.ok("wrong password -> HTTP 401 (NoAccessTokenProvided: {!r})".format(message))

    admin = Driver(driver_options(base, login_id=ADMIN_USERNAME, password=ADMIN_PASSWORD))
    me = admin.login()
    check(isinstance(me, dict), "login body must be a JSON User, got {!r}".format(me))
    check(admin.client.token, "login response carried no 'Token' header (or status was not 200)")
    check_eq(me.get("id"), admin_id, "login body id")
    check_eq(admin.client.userid, admin_id, "driver userid after login")
    check_eq(admin.client.username, ADMIN_USERNAME, "driver username after login")
    me2 = as_json(admin.users.get_user("me"), "GET /users/me")
    check_eq(me2.get("id"), admin_id, "GET /users/me id")
    check("system_admin" in (me2.get("roles") or "").split(), "GET /users/me roles lack system_admin")
    report.ok("driver login as admin: Token header stored, GET /users/me is the admin")

    # ---- (b) team and public channel ----------------------------------------
    st["step"] = "b team and channel"
    team = admin.teams.create_team({"name": TEAM_NAME, "display_name": "Drivers", "type": "O"})
    check_id(team.get("id"), "team id")
    check_eq(team.get("name"), TEAM_NAME, "team name")
    check_eq(team.get("type"), "O", "team type")
    team_id = team["id"]
    st["team_id"] = team_id
    by_name = as_json(admin.teams.get_team_by_name(TEAM_NAME), "GET /teams/name/drivers")
    check_eq(by_name.get("id"), team_id, "team by name id")
    report.ok("created team 'drivers' ({}) and read it back by name".format(team_id))

    channel = admin.channels.create_channel(
        {
            "team_id": team_id,
            "name": CHANNEL_NAME,
            "display_name": "Driven",
            "type": "O",
            "purpose": "driven by mattermostdriver",
        }
    )
    check_id(channel.get("id"), "channel id")
    check_eq(channel.get("team_id"), team_id, "channel team_id")
    check_eq(channel.get("name"), CHANNEL_NAME, "channel name")
    check_eq(channel.get("type"), "O", "channel type")
    channel_id = channel["id"]
    st["channel_id"] = channel_id
    ch2 = as_json(admin.channels.get_channel_by_name(team_id, CHANNEL_NAME), "GET channel by name")
    check_eq(ch2.get("id"), channel_id, "channel by name id")
    report.ok("created public channel 'driven' ({}) and read it back by name".format(channel_id))

    try:
        with quiet_driver_errors():
            admin.channels.get_channel_by_name(team_id, "no-such-channel")
        raise CheckFailed("GET /teams/{}/channels/name/no-such-channel did not fail".format(team_id))
    except ResourceNotFound:
        pass
    report.ok("unknown channel name -> HTTP 404 (ResourceNotFound)")

    # ---- (c) bot, its token, second driver, memberships ---------------------
    st["step"] = "c bot account"
    bot_request = {
        "username": BOT_USERNAME,
        "display_name": "Driver Bot",
        "description": "bot driven by mattermostdriver",
    }
    # Driver has no `bots` property in 7.3.2 (only the deprecated `api['bots']`);
    # use the driver's own endpoint class on its client.
    bots = Bots(admin.client)
    try:
        with quiet_driver_errors():
            bot = bots.create_bot(bot_request)
    except NotEnoughPermissions:
        # Real servers ship with ServiceSettings.EnableBotAccountCreation=false
        # (403 api.bot.create_disabled).  The driver has no config-patch method;
        # use its generic client.
        print("note: POST /bots refused with 403; enabling bot creation via PUT /config/patch", flush=True)
        admin.client.put("/config/patch", options={"ServiceSettings": {"EnableBotAccountCreation": True}})
        bot = bots.create_bot(bot_request)
    check_id(bot.get("user_id"), "bot user_id")
    check_eq(bot.get("username"), BOT_USERNAME, "bot username")
    check_eq(bot.get("owner_id"), admin_id, "bot owner_id")
    bot_id = bot["user_id"]
    st["bot_id"] = bot_id
    report.ok("POST /bots created 'driverbot' (user_id {})".format(bot_id))

    token = admin.users.create_user_access_token(bot_id, {"description": "drive_simulator"})
    check(isinstance(token.get("token"), str) and token["token"], "token response lacks 'token'")
    check_eq(token.get("user_id"), bot_id, "token user_id")
    check_id(token.get("id"), "token record id")
    check(token["id"] != token["token"], "token record id must differ from the secret")
    report.ok("POST /users/{bot}/tokens minted a personal access token for the bot")

    bot_driver = Driver(driver_options(base, token=token["token"]))
    bot_me = bot_driver.login()
    check(isinstance(bot_me, dict), "GET /users/me as bot did not return JSON")
    check_eq(bot_me.get("id"), bot_id, "bot GET /users/me id")
    check_eq(bot_me.get("is_bot"), True, "bot GET /users/me is_bot")
    check_eq(bot_me.get("username"), BOT_USERNAME, "bot GET /users/me username")
    report.ok("second Driver logged in with the bot token (GET /users/me is_bot=true)")

    tm = admin.teams.add_user_to_team(team_id, {"team_id": team_id, "user_id": bot_id})
    check_eq(tm.get("team_id"), team_id, "team member team_id")
    check_eq(tm.get("user_id"), bot_id, "team member user_id")
    cm = admin.channels.add_user(channel_id, {"user_id": bot_id})
    check_eq(cm.get("channel_id"), channel_id, "channel member channel_id")
    check_eq(cm.get("user_id"), bot_id, "channel member user_id")
    cm2 = as_json(bot_driver.channels.get_channel_member(channel_id, bot_id), "GET channel member")
    check_eq(cm2.get("user_id"), bot_id, "GET channel member user_id")
    check_eq(cm2.get("channel_id"), channel_id, "GET channel member channel_id")
    report.ok("bot added to team and channel; bot reads its own channel membership")

    # ---- (d) admin websocket -------------------------------------------------
    st["step"] = "d websocket"
    ws = WebsocketCollector(admin)
    st["ws"] = ws
    ws.start()
    if not ws.hello.wait(args.ws_wait):
        detail = ""
        if ws.error is not None:
            detail = " (websocket thread died: {!r})".format(ws.error)
        raise CheckFailed(
            "no 'hello' within {}s after opening {}://{}:{}{}/websocket and sending "
            "authentication_challenge{}".format(
                args.ws_wait, "wss" if base["scheme"] == "https" else "ws",
                base["host"], base["port"], base["basepath"], detail,
            )
        )
    report.ok("admin websocket authenticated by challenge and received 'hello'")

    # ---- (e) five posts by the bot ------------------------------------------
    st["step"] = "e bot posts"
    posts = []
    for i in range(1, 6):
        message = "driven message {}".format(i)
        post = bot_driver.posts.create_post({"channel_id": channel_id, "message": message})
        check_id(post.get("id"), "post {} id".format(i))
        check_eq(post.get("message"), message, "post {} message".format(i))
        check_eq(post.get("user_id"), bot_id, "post {} user_id".format(i))
        check_eq(post.get("channel_id"), channel_id, "post {} channel_id".format(i))
        check_eq((post.get("props") or {}).get("from_bot"), "true", "post {} props.from_bot".format(i))
        check(isinstance(post.get("create_at"), int) and post["create_at"] > 0,
              "post {} create_at must be an integer (ms), got {!r}".format(i, post.get("create_at")))
        if posts:
            check(post["create_at"] > posts[-1]["create_at"],
                  "post {} create_at {} not after previous {}".format(i, post["create_at"], posts[-1]["create_at"]))
        posts.append(post)
        time.sleep(0.01)  # distinct milliseconds, so after/before anchors are unambiguous
    st["posts"] = posts
    ids = [p["id"] for p in posts]  # oldest first
    report.ok("bot created 5 posts (201, user_id=bot, props.from_bot='true', increasing create_at)")

    # ---- (f) pagination ------------------------------------------------------
    st["step"] = "f pagination"

    def page_list(params, what):
        result = as_json(bot_driver.posts.get_posts_for_channel(channel_id, params=params), what)
        check(isinstance(result, dict), "{}: expected a PostList object".format(what))
        order = result.get("order")
        post_map = result.get("posts")
        check(isinstance(order, list), "{}: 'order' must be a list, got {!r}".format(what, order))
        check(isinstance(post_map, dict) or (post_map is None and not order),
              "{}: 'posts' must be an object, got {!r}".format(what, post_map))
        post_map = post_map or {}
        check(len(order) == len(set(order)), "{}: duplicate ids in order {}".format(what, order))
        for pid in order:
            check(pid in post_map, "{}: id {} in order but not in posts".format(what, pid))
            check_eq(post_map[pid].get("id"), pid, "{}: posts[{}].id".format(what, pid))
        stamps = [post_map[pid].get("create_at") for pid in order]
        check(stamps == sorted(stamps, reverse=True),
              "{}: order is not newest-first by create_at: {}".format(what, stamps))
        return order, post_map

    walked = []
    for page in range(0, 100):
        what = "GET /channels/{}/posts?page={}&per_page=2".format(channel_id, page)
        order, post_map = page_list({"page": page, "per_page": 2}, what)
        check(len(order) <= 2, "{}: per_page=2 but got {} posts".format(what, len(order)))
        for pid in order:
            if pid in ids:
                check_eq(post_map[pid].get("message"), posts[ids.index(pid)]["message"],
                         "{}: message of {}".format(what, pid))
        walked.extend(order)
        if len(order) < 2:
            break
    else:
        raise CheckFailed("pagination did not end after 100 pages of 2")
    check(len(walked) == len(set(walked)), "pages overlap: {}".format(walked))
    check_eq(walked[:5], list(reversed(ids)), "first five ids across pages (newest first)")
    report.ok("paged the channel with per_page=2 over {} posts; all 5 found newest-first, no overlap".format(len(walked)))

    order, _ = page_list({"after": ids[1], "per_page": 2}, "posts after post 2, page 0")
    check_eq(order, [ids[3], ids[2]], "after=post2 page 0 order")
    order, _ = page_list({"after": ids[1], "per_page": 2, "page": 1}, "posts after post 2, page 1")
    check_eq(order, [ids[4]], "after=post2 page 1 order")
    report.ok("after=<post 2>&per_page=2 gives [4,3] then [5]")

    order, _ = page_list({"before": ids[3], "per_page": 2}, "posts before post 4, page 0")
    check_eq(order, [ids[2], ids[1]], "before=post4 page 0 order")
    order, _ = page_list({"before": ids[3], "per_page": 2, "page": 1}, "posts before post 4, page 1")
    check(order and order[0] == ids[0],
          "before=post4 page 1 must start with post 1 ({}), got {}".format(ids[0], order))
    report.ok("before=<post 4>&per_page=2 gives [3,2] then [1,...]")

    # ---- (g) reaction --------------------------------------------------------
    st["step"] = "g reaction"
    reacted = ids[2]
    reaction = admin.reactions.create_reaction(
        {"user_id": admin_id, "post_id": reacted, "emoji_name": "thumbsup"}
    )
    check_eq(reaction.get("user_id"), admin_id, "reaction user_id")
    check_eq(reaction.get("post_id"), reacted, "reaction post_id")
    check_eq(reaction.get("emoji_name"), "thumbsup", "reaction emoji_name")
    # Note: the driver requests GET /posts/{id}//reactions (double slash).
    try:
        listed = admin.reactions.get_reactions_of_post(reacted)
    except ResourceNotFound as exc:
        raise CheckFailed(
            "GET /api/v4/posts/{}//reactions -> 404 ({}); mattermostdriver builds this URL with a "
            "double slash: the server must answer it (collapse '//' or 301-redirect to the cleaned "
            "path, as the real server's router does)".format(reacted, exc)
        )
    listed = as_json(listed, "GET /posts/{id}//reactions")
    check(isinstance(listed, list), "reactions list must be a JSON array, got {!r}".format(listed))
    check(any(r.get("user_id") == admin_id and r.get("emoji_name") == "thumbsup" for r in listed),
          "reaction not listed: {!r}".format(listed))
    got = as_json(admin.posts.get_post(reacted), "GET /posts/{id}")
    check_eq(got.get("has_reactions"), True, "post has_reactions after reacting")
    report.ok("admin reacted :thumbsup: to post 3 and read it back (has_reactions=true)")

    # ---- (h) pin -------------------------------------------------------------
    st["step"] = "h pin"
    pinned = ids[1]
    status = admin.posts.pin_post_to_channel(pinned)
    check_eq(status.get("status") if isinstance(status, dict) else status, "OK", "pin status")
    pins = as_json(admin.channels.get_channel_pinned_posts(channel_id), "GET /channels/{id}/pinned")
    check(isinstance(pins, dict) and isinstance(pins.get("order"), list), "pinned must be a PostList")
    check_eq(pins["order"], [pinned], "pinned posts order")
    check_eq((pins.get("posts") or {}).get(pinned, {}).get("is_pinned"), True, "pinned post is_pinned")
    got = as_json(admin.posts.get_post(pinned), "GET /posts/{id}")
    check_eq(got.get("is_pinned"), True, "post is_pinned after pin")
    report.ok("pinned post 2; GET /channels/{id}/pinned lists exactly it")

    # ---- (i) file upload and attachment --------------------------------------
    st["step"] = "i file"
    upload = admin.files.upload_file(channel_id, {"files": (FILE_NAME, FILE_BYTES, "text/plain")})
    infos = upload.get("file_infos")
    check(isinstance(infos, list) and len(infos) == 1, "upload file_infos: {!r}".format(infos))
    info = infos[0]
    check_id(info.get("id"), "uploaded file id")
    check_eq(info.get("name"), FILE_NAME, "uploaded file name")
    check_eq(info.get("size"), len(FILE_BYTES), "uploaded file size")
    check(not info.get("post_id"), "freshly uploaded file must not be attached, post_id={!r}".format(info.get("post_id")))
    file_id = info["id"]
    report.ok("POST /files (multipart) uploaded {} as {}".format(FILE_NAME, file_id))

    fpost = admin.posts.create_post(
        {"channel_id": channel_id, "message": "file attached by the driver", "file_ids": [file_id]}
    )
    check_id(fpost.get("id"), "file post id")
    check_eq(fpost.get("file_ids"), [file_id], "file post file_ids")
    st["file_post"] = fpost
    meta = as_json(admin.files.get_file_metadata(file_id), "GET /files/{id}/info")
    check_eq(meta.get("id"), file_id, "file info id")
    check_eq(meta.get("post_id"), fpost["id"], "file info post_id")
    check_eq(meta.get("user_id"), admin_id, "file info user_id")
    check_eq(meta.get("name"), FILE_NAME, "file info name")
    check_eq(meta.get("extension"), "txt", "file info extension")
    check_eq(meta.get("size"), len(FILE_BYTES), "file info size")
    check(str(meta.get("mime_type", "")).startswith("text/plain"), "file info mime_type {!r}".format(meta.get("mime_type")))
    if meta.get("channel_id"):
        check_eq(meta.get("channel_id"), channel_id, "file info channel_id")
    report.ok("attached the file to a post; GET /files/{id}/info shows post_id and metadata")

    # ---- (j) websocket events ------------------------------------------------
    st["step"] = "j websocket events"

    def decoded(event, key):
        raw = (event.get("data") or {}).get(key)
        check(isinstance(raw, str), "{} event: data.{} must be a JSON string, got {!r}".format(
            event.get("event"), key, type(raw).__name__))
        try:
            return json.loads(raw)
        except ValueError:
            raise CheckFailed("{} event: data.{} is not valid JSON: {!r}".format(event.get("event"), key, raw))

    def posted_ids(events):
        found = []
        for e in events:
            if e.get("event") == "posted":
                raw = (e.get("data") or {}).get("post")
                if isinstance(raw, str):
                    try:
                        found.append(json.loads(raw).get("id"))
                    except ValueError:
                        pass
        return found

    def edited_pinned(events):
        for e in events:
            if e.get("event") == "post_edited":
                raw = (e.get("data") or {}).get("post")
                try:
                    p = json.loads(raw) if isinstance(raw, str) else {}
                except ValueError:
                    p = {}
                if p.get("id") == pinned:
                    return True
        return False

    wanted = set(ids) | {fpost["id"]}
    complete = ws.wait_for(
        lambda evs: wanted <= set(posted_ids(evs))
        and any(e.get("event") == "reaction_added" for e in evs)
        and edited_pinned(evs),
        args.ws_wait,
    )
    frames = ws.snapshot()
    events = ws.events()
    if ws.error is not None:
        raise CheckFailed("websocket thread failed: {!r}".format(ws.error))

    for raw, parsed in frames:
        check(isinstance(raw, str), "websocket frames must be text frames, got {}".format(type(raw).__name__))
        check(isinstance(parsed, dict), "websocket frame is not a JSON object: {!r}".format(raw))
    check(events, "no websocket events at all")
    first = events[0]
    check_eq(first.get("event"), "hello", "first websocket event")
    check_eq(first.get("seq"), 0, "hello seq")
    conn_id = (first.get("data") or {}).get("connection_id")
    check(isinstance(conn_id, str) and conn_id, "hello data.connection_id must be a non-empty string")
    check_eq((first.get("broadcast") or {}).get("user_id"), admin_id, "hello broadcast.user_id")
    seqs = [e.get("seq") for e in events]
    check_eq(seqs, list(range(len(events))), "event seq numbers (must be 0,1,2,... with no gaps)")
    for e in events:
        check("seq_reply" not in e, "event {} carries seq_reply".format(e.get("event")))
    replies = [p for _, p in frames if "event" not in p]
    for r in replies:
        check(r.get("seq_reply"), "response frame without a truthy seq_reply: {!r}".format(r))
    check(any(r.get("seq_reply") == 1 and r.get("status") == "OK" for r in replies),
          "no {\"status\":\"OK\",\"seq_reply\":1} reply to the authentication_challenge: " + repr(replies))
    report.ok("websocket: 'hello' first (seq 0, connection_id, broadcast.user_id=admin), "
              "challenge answered with seq_reply 1, {} events with consecutive seq".format(len(events)))

    check(complete, "within {}s the admin socket did not receive every expected event; posted ids seen: {}, "
          "events: {}".format(args.ws_wait, posted_ids(events), [e.get("event") for e in events]))
    by_id = {}
    for e in events:
        if e.get("event") == "posted":
            p = decoded(e, "post")
            by_id.setdefault(p.get("id"), (e, p))
    for i, pid in enumerate(ids, start=1):
        e, p = by_id[pid]
        data = e.get("data") or {}
        check_eq(p.get("message"), "driven message {}".format(i), "posted post.message for post {}".format(i))
        check_eq(p.get("user_id"), bot_id, "posted post.user_id for post {}".format(i))
        check_eq(p.get("channel_id"), channel_id, "posted post.channel_id for post {}".format(i))
        check_eq(data.get("channel_type"), "O", "posted data.channel_type")
        check_eq(data.get("channel_name"), CHANNEL_NAME, "posted data.channel_name")
        check_eq(data.get("sender_name"), "@" + BOT_USERNAME, "posted data.sender_name")
        check_eq(data.get("team_id"), team_id, "posted data.team_id")
        check_eq((e.get("broadcast") or {}).get("channel_id"), channel_id, "posted broadcast.channel_id")
    order_seen = [pid for pid in posted_ids(events) if pid in ids]
    check_eq(order_seen, ids, "posted events in publication order")
    report.ok("websocket delivered 'posted' for all 5 bot posts; data.post is a JSON string with the expected message")

    e, p = by_id[fpost["id"]]
    check_eq(p.get("file_ids"), [file_id], "posted (file post) post.file_ids")
    check_eq((e.get("data") or {}).get("otherFile"), "true", "posted (file post) data.otherFile")
    reactions = [decoded(ev, "reaction") for ev in events if ev.get("event") == "reaction_added"]
    check(any(r.get("post_id") == reacted and r.get("emoji_name") == "thumbsup" and r.get("user_id") == admin_id
              for r in reactions), "reaction_added with the admin's :thumbsup: not seen: {!r}".format(reactions))
    edits = [decoded(ev, "post") for ev in events if ev.get("event") == "post_edited"]
    check(any(x.get("id") == pinned and x.get("is_pinned") is True for x in edits),
          "post_edited with is_pinned=true for the pinned post not seen")
    report.ok("websocket also delivered posted(otherFile), reaction_added (JSON string) and post_edited (pin)")

    st["step"] = "j websocket shutdown"
    ws.stop(args.ws_timeout + 5)
    report.ok("websocket disconnected")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="server base URL, e.g. http://127.0.0.1:8065")
    parser.add_argument("--wait", type=float, default=15.0,
                        help="seconds to keep retrying GET /system/ping until the server is up (default 15)")
    parser.add_argument("--request-timeout", type=float, default=20.0,
                        help="per-request HTTP timeout in seconds (default 20)")
    parser.add_argument("--ws-wait", type=float, default=10.0,
                        help="seconds to wait for websocket frames (default 10)")
    parser.add_argument("--ws-timeout", type=int, default=5,
                        help="mattermostdriver 'timeout' option: idle seconds before it sends a pong "
                             "frame and re-checks for disconnect (default 5; the driver's own default is 30)")
    parser.add_argument("--debug", action="store_true", help="verbose driver/HTTP logging")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("mattermostdriver.websocket").addFilter(_DropMisleadingAuthLog())
    if not args.debug:
        # The driver pins its loggers to INFO at import time; keep the output to
        # our own lines plus real warnings.
        for name in ("mattermostdriver.websocket", "mattermostdriver.api"):
            logging.getLogger(name).setLevel(logging.WARNING)

    report = Report()
    state = {"step": "start"}
    failed = 0
    try:
        run(args, report, state)
    except CheckFailed as exc:
        failed = 1
        print("FAIL: [{}] {}".format(state["step"], exc), flush=True)
    except Exception as exc:  # noqa: BLE001 - driver errors are failures too
        failed = 1
        print("FAIL: [{}] {}: {}".format(state["step"], type(exc).__name__, exc), flush=True)
    finally:
        ws = state.get("ws")
        if failed and ws is not None:
            ws.stop(1)
    print("python-driver: {} passed, {} failed".format(report.passed, failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
