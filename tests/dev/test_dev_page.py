"""The dev page of `cargo mcp dev`, in headless Chromium (Debian's) driven by Playwright (PyPI):
it fills the form of a tool with nested, enum and array arguments, runs it and reads the result;
renders an MCP App through its host bridge, both an App written against the real App SDK
(`@modelcontextprotocol/ext-apps` 2.0.4, from npm) and `skills_apps`' weather page; and shows a
tool added by an edit without a reload. Screenshots go to `cargo-mcp/docs/` when
`DEV_PAGE_SCREENSHOTS` is set.

Run through `scripts/dev-loop.sh`, which installs chromium, Playwright and the App SDK.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from conftest import REPO, FIRST_BUILD_TIMEOUT, Log, environment, free_port, new_crate, serve, stop

REBUILD_TIMEOUT_MS = 300_000
SDK = Path(os.environ.get("EXT_APPS_CACHE", REPO / ".cache" / "apps")) / "node_modules" / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "app-with-deps.js"
SCREENSHOTS = os.environ.get("DEV_PAGE_SCREENSHOTS")

# A tool with nested, enum, optional and array arguments, and one whose App uses the SDK.
TRIP = '''
/// How to travel.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    /// On foot.
    Walk,
    /// By train.
    Train,
    /// By air.
    Fly,
}

/// A place.
#[derive(Debug, Deserialize, JsonSchema)]
struct Place {
    /// The city.
    city: String,
    /// The country, when the city's name is not enough.
    country: Option<String>,
}

/// Plan a trip: where from, where to, how, and the stops on the way.
#[tool]
async fn plan_trip(
    /// Where the trip starts.
    from: Place,
    /// Where it ends.
    to: Place,
    /// How to travel.
    mode: Mode,
    /// Stops on the way, in order.
    stops: Vec<String>,
    /// Travellers.
    #[arg(default = 1)]
    people: u32,
) -> String {
    let stops = if stops.is_empty() { "no stops".to_owned() } else { stops.join(" then ") };
    format!(
        "{} to {} by {:?} for {people}, {stops} ({})",
        from.city,
        to.city,
        mode,
        to.country.unwrap_or_else(|| "no country given".to_owned())
    )
}

/// The sum, drawn by an App written with the MCP Apps SDK.
#[tool(ui = "ui://sdk/view")]
async fn drawn_sum(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> String {
    format!("{} + {} = {}", a, b, a + b)
}
'''

# The server with the App's page, as `skills_apps` serves its own.
SERVER = '''fn server() -> Server {
    Server::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
        .description(env!("CARGO_PKG_DESCRIPTION"))
        .resource_def(
            mcp_runtime::app::UiResource::new("ui://sdk/view", "sdk-view", include_str!("sdk.html"))
                .description("The sum, drawn")
                .build(),
        )
}'''

NEW_TOOL = '''
/// Reverse a text.
#[tool]
async fn reverse(
    /// The text.
    text: String,
) -> String {
    text.chars().rev().collect()
}
'''


def sdk_page() -> str:
    """An App page that imports nothing: the SDK's bundle inline, then an `App` that connects,
    shows the tool result it is sent, and calls the server's `add` tool through the host."""
    if not SDK.is_file():
        pytest.exit(f"{SDK} not found; run scripts/ext-apps.sh (scripts/dev-loop.sh does)", 2)
    bundle = SDK.read_text()
    exports = re.search(r"export\s*\{([^}]*)\}\s*;?\s*$", bundle)
    assert exports, "the SDK bundle ends with no export list"
    local = re.search(r"(\w+) as App\b", exports.group(1))
    assert local, "the SDK bundle exports no App"
    body = bundle[: exports.start()]
    app = f"""
const App = {local.group(1)};
const app = new App({{ name: "sdk-test-app", version: "1.0.0" }});
app.ontoolresult = (result) => {{
  document.getElementById("result").textContent = "SDK got: " + result.content[0].text;
}};
await app.connect();
document.getElementById("host").textContent = "host: " + app.getHostVersion().name;
const added = await app.callServerTool({{ name: "add", arguments: {{ a: 40, b: 2 }} }});
document.getElementById("called").textContent = "add through the host: " + JSON.stringify(added.structuredContent);
"""
    return (
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>SDK app</title></head><body>"
        "<h1>Drawn sum</h1><p id=\"host\">not connected</p><p id=\"result\">no result yet</p><p id=\"called\"></p>"
        f"<script type=\"module\">{body}\n{app}</script></body></html>"
    )


def launch(playwright):
    profile = tempfile.mkdtemp(prefix="dev-page-chromium-")
    browser = playwright.chromium.launch_persistent_context(
        profile,
        executable_path=shutil.which("chromium") or "/usr/bin/chromium",
        headless=True,
        args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run",
        ],
        viewport={"width": 1280, "height": 900},
    )
    return browser, profile


def screenshot(page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True)


def test_the_dev_page_runs_tools_renders_apps_and_follows_edits(workdir, dev_log) -> None:
    crate = new_crate(workdir, "devpage")
    main = crate / "src" / "main.rs"
    source = main.read_text()
    start = source.index("fn server() -> Server {")
    end = source.index("}\n", start) + 2
    main.write_text(source[:start] + SERVER + "\n" + source[end:] + TRIP)
    (crate / "src" / "sdk.html").write_text(sdk_page())
    dev = serve(crate, dev_log)
    try:
        page_scenario(dev, main)
    finally:
        stop(dev.process)


def page_scenario(dev, main: Path) -> None:
    with sync_playwright() as playwright:
        browser, profile = launch(playwright)
        try:
            page = browser.new_page()
            page.goto(dev.url.removesuffix("/mcp") + "/")
            expect(page.locator("#status")).to_have_text("connected", timeout=30_000)
            tools = page.locator("#tools-list li")
            expect(tools).to_have_count(3, timeout=30_000)

            # The form of a tool with nested objects, an enum, an array and a default.
            page.locator('#tools-list li[data-name="plan_trip"]').click()
            expect(page.locator('select[name="mode"]')).to_be_visible()
            expect(page.locator('input[name="people"]')).to_have_value("1")
            page.fill('input[name="from.city"]', "Oslo")
            page.fill('input[name="to.city"]', "Bergen")
            page.fill('input[name="to.country"]', "Norway")
            page.select_option('select[name="mode"]', label="train — By train.")
            page.click('button[name="stops.add"]')
            page.fill('input[name="stops.0"]', "Voss")
            page.fill('input[name="people"]', "2")
            page.click("#run")
            expect(page.locator("#tool-result pre.text")).to_have_text(
                "Oslo to Bergen by Train for 2, Voss (Norway)", timeout=30_000
            )
            screenshot(page, "dev-page-tool.png")

            # A required field left empty is caught before anything is sent.
            page.fill('input[name="from.city"]', "")
            page.click("#run")
            expect(page.locator("#tool-result")).to_contain_text("from.city is required")

            # An App written with the SDK: it connects, gets the result, calls a tool through
            # the host.
            page.locator('#tools-list li[data-name="drawn_sum"]').click()
            page.fill('input[name="a"]', "2")
            page.fill('input[name="b"]', "3")
            page.click("#run")
            app = page.frame_locator("iframe.app").frame_locator("iframe")
            expect(app.locator("#host")).to_have_text("host: cargo-mcp-dev", timeout=30_000)
            expect(app.locator("#result")).to_have_text("SDK got: 2 + 3 = 5", timeout=30_000)
            expect(app.locator("#called")).to_have_text('add through the host: {"result":42}', timeout=30_000)
            screenshot(page, "dev-page-app.png")

            # An edit adds a tool: the page lists it without a reload.
            with open(main, "a") as file:
                file.write(NEW_TOOL)
            expect(page.locator('#tools-list li[data-name="reverse"]')).to_be_visible(timeout=REBUILD_TIMEOUT_MS)
            page.locator('#tools-list li[data-name="reverse"]').click()
            page.fill('input[name="text"]', "stressed")
            page.click("#run")
            expect(page.locator("#tool-result pre.text")).to_have_text("desserts", timeout=30_000)
            page.locator('#tabs button[data-tab="log"]').click()
            expect(page.locator("#log")).to_contain_text("serving 4 tools", timeout=30_000)
            screenshot(page, "dev-page-log.png")
        finally:
            browser.close()
            shutil.rmtree(profile, ignore_errors=True)


def test_the_weather_app_of_skills_apps_renders_in_the_preview(dev_log) -> None:
    """`skills_apps`' own weather page, served by `cargo mcp dev --example skills_apps` in this
    workspace."""
    port = free_port()
    # Built in the dev-loop target directory with the other crates of these tests (the example's
    # dependencies are theirs), not in the workspace's, where other builds may hold the lock.
    env = environment()
    process = subprocess.Popen(
        [str(Path(os.environ.get("CARGO_MCP_BIN", REPO / "target" / "debug" / "cargo-mcp"))), "mcp", "dev",
         "-p", "mcp-examples", "--example", "skills_apps", "--port", str(port)],
        cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    log = Log(process.stderr)
    dev_log.append(log)
    try:
        log.wait_for(r"cargo mcp dev: serving http://", FIRST_BUILD_TIMEOUT)
        with sync_playwright() as playwright:
            browser, profile = launch(playwright)
            try:
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}/")
                page.locator('#tools-list li[data-name="weather"]').click()
                page.fill('input[name="city"]', "Oslo")
                page.click("#run")
                app = page.frame_locator("iframe.app").frame_locator("iframe")
                expect(app.locator("h1")).to_have_text("Weather", timeout=30_000)
                expect(app.locator("#forecast")).to_have_text("Oslo: 18 °C, light wind, no rain", timeout=30_000)
                screenshot(page, "dev-page-weather.png")
            finally:
                browser.close()
                shutil.rmtree(profile, ignore_errors=True)
    finally:
        stop(process)
