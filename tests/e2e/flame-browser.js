// SPDX-License-Identifier: MIT
// flame-browser.js - drives nettrace-flame's SVG in headless Chromium (playwright-core with
// the system's chromium) with a real mouse and keyboard, for tests/e2e/t301-flame-browser.sh.
// Prints one line per check: "PASS description" or "FAIL description: details"; the shell
// test turns them into TAP. Exit code 0 when it could run (whatever the checks say), 3 when
// the browser cannot start.
//
//   node flame-browser.js --svg FILE [--hover NAME] [--search TERM --matched PCT]
//                         [--zoom NAME] [--literal NAME] [--max-load-ms N]
//                         [--timeline-drag A,B --timeline-range TEXT]
// NAME is a frame's full name (its <title>); PCT the expected "Matched:" percentage;
// A,B bar indexes of the --timeline strip to drag between (A == B: a click), TEXT the
// expected "--range X..Y" it then shows.
"use strict";
const path = require("path");

function arg(name, def) {
	const i = process.argv.indexOf("--" + name);
	return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}
function pass(d) { console.log("PASS " + d); }
function fail(d, why) { console.log("FAIL " + d + ": " + why); }
function check(cond, d, why) { cond ? pass(d) : fail(d, why); }

async function main() {
	let pw;
	try {
		pw = require("playwright-core");
	} catch (e) {
		console.log("SKIP playwright-core is not installed");
		process.exit(0);
	}
	const svg = path.resolve(arg("svg"));
	let browser;
	try {
		browser = await pw.chromium.launch({
			executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
			args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
		});
	} catch (e) {
		console.log("BROWSER cannot start: " + String(e.message).split("\n")[0]);
		process.exit(3);
	}
	const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
	const dialogs = [];
	let answer = null;
	page.on("dialog", async (d) => {
		dialogs.push(d.type() + ":" + d.message());
		if (d.type() === "prompt" && answer !== null)
			await d.accept(answer);
		else
			await d.dismiss();
	});
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));

	const t0 = Date.now();
	await page.goto("file://" + svg, { waitUntil: "load", timeout: 120000 });
	const loadMs = Date.now() - t0;
	const nframes = await page.evaluate(() => document.querySelectorAll("#frames > g").length);
	console.log("INFO loaded " + nframes + " frames in " + loadMs + " ms");
	const maxLoad = +arg("max-load-ms", "0");
	if (maxLoad)
		check(loadMs <= maxLoad, "opens in at most " + maxLoad + " ms", loadMs + " ms");
	check(errors.length === 0, "no script errors on load", errors.join("; "));
	check(nframes > 0, "has frames", "none");

	// frame lookup by exact name: the rect of the first <g> whose <title> is NAME
	async function frameBox(name) {
		const i = await page.evaluate((n) => {
			const gs = document.querySelectorAll("#frames > g");
			for (let k = 0; k < gs.length; k++)
				if (gs[k].querySelector("title").textContent === n &&
				    !gs[k].classList.contains("hide"))
					return k;
			return -1;
		}, name);
		if (i < 0)
			return null;
		const r = page.locator("#frames > g").nth(i).locator("rect");
		return { index: i, box: await r.boundingBox(), rect: r };
	}
	const rectWidth = (i) => page.evaluate((k) =>
		+document.querySelectorAll("#frames > g")[k].querySelector("rect").getAttribute("width"), i);
	const text = (id) => page.evaluate((x) => document.getElementById(x).textContent, id);
	const hidden = (id) => page.evaluate((x) =>
		getComputedStyle(document.getElementById(x)).display === "none", id);

	const hoverName = arg("hover");
	if (hoverName) {
		const f = await frameBox(hoverName);
		if (!f) {
			fail("hover: frame found", hoverName);
		} else {
			await page.mouse.move(f.box.x + f.box.width / 2, f.box.y + f.box.height / 2);
			const d = await text("details");
			check(d.startsWith(hoverName + " (total "), "hover shows the frame's name and total", d);
			check(/\d%; self /.test(d) && /self .*\d%\)/.test(d), "hover shows total % and self %", d);
			await page.mouse.move(2, 2);
			check((await text("details")).trim() === "", "leaving the frame clears the details",
			      await text("details"));
		}
	}

	const term = arg("search");
	if (term) {
		answer = term;
		await page.click("#search");
		answer = null;
		check(dialogs.some((d) => d.startsWith("prompt:")), "Search asks for a term", dialogs.join("|"));
		const hl = await page.evaluate((t) => {
			const re = new RegExp(t);
			let lit = 0, want = 0, wrong = 0;
			document.querySelectorAll("#frames > g").forEach((g) => {
				const m = re.test(g.querySelector("title").textContent);
				const on = g.querySelector("rect").getAttribute("fill") === "rgb(230,0,230)";
				want += m; lit += on; wrong += m !== on;
			});
			return { lit, want, wrong };
		}, term);
		check(hl.want > 0 && hl.lit === hl.want && hl.wrong === 0,
		      "search highlights exactly the matching frames (" + hl.lit + ")", JSON.stringify(hl));
		const m = await text("matched");
		const want = arg("matched");
		const got = /^Matched: ([0-9.]+)%/.exec(m);
		check(!(await hidden("matched")) && got, "search shows the matched percentage", m);
		if (want && got)
			check(Math.abs(+got[1] - +want) <= 0.011, "matched % is " + want + " (the folded share)",
			      "got " + got[1]);
		// Escape clears the search (then Ctrl-F opens it again)
		await page.keyboard.press("Escape");
		const after = await page.evaluate(() => [...document.querySelectorAll("#frames rect")]
			.filter((r) => r.getAttribute("fill") === "rgb(230,0,230)").length);
		check(after === 0 && (await hidden("matched")), "Escape resets the search", after + " lit");
		answer = term;
		await page.keyboard.press("Control+f");
		answer = null;
		check((await text("matched")).startsWith("Matched: "), "Ctrl-F searches again", await text("matched"));
		await page.click("#search"); // "Reset Search"
		check(await hidden("matched"), "the Reset Search button clears it", await text("matched"));
	}

	const zoomName = arg("zoom");
	if (zoomName) {
		const f = await frameBox(zoomName);
		if (!f) {
			fail("zoom: frame found", zoomName);
		} else {
			const before = await page.evaluate(() => [...document.querySelectorAll("#frames > g rect")]
				.map((r) => r.getAttribute("x") + "," + r.getAttribute("width")));
			const w0 = await rectWidth(f.index);
			check(await hidden("unzoom"), "Reset Zoom is hidden before zooming", "visible");
			await page.mouse.click(f.box.x + f.box.width / 2, f.box.y + f.box.height / 2);
			const w1 = await rectWidth(f.index);
			const plot = await page.evaluate(() => cfg.width - 2 * cfg.xpad);
			check(Math.abs(w1 - plot) < 0.02, "click zooms: the frame spans the width (" +
			      w0.toFixed(1) + " -> " + w1.toFixed(1) + " px)", w1 + " != " + plot);
			const st = await page.evaluate(() => {
				let hid = 0, par = 0;
				document.querySelectorAll("#frames > g").forEach((g) => {
					hid += g.classList.contains("hide");
					par += g.classList.contains("parent");
				});
				return { hid, par };
			});
			check(st.hid > 0, "zoom hides the frames outside the subtree (" + st.hid + ")", "none hidden");
			check(st.par > 0, "zoom dims the callers", "none dimmed");
			check(!(await hidden("unzoom")), "Reset Zoom appears", "hidden");
			const lbl = await page.evaluate((k) =>
				document.querySelectorAll("#frames > g")[k].querySelector("text").textContent, f.index);
			check(lbl === zoomName, "the zoomed frame's label shows its whole name", lbl);
			await page.click("#unzoom");
			const after = await page.evaluate(() => [...document.querySelectorAll("#frames > g rect")]
				.map((r) => r.getAttribute("x") + "," + r.getAttribute("width")));
			let same = 0;
			for (let k = 0; k < before.length; k++) {
				const [x0, wa] = before[k].split(","), [x1, wb] = after[k].split(",");
				same += Math.abs(x0 - x1) < 0.02 && Math.abs(wa - wb) < 0.02;
			}
			check(same === before.length, "Reset Zoom restores every frame", same + "/" + before.length);
			check(await hidden("unzoom"), "Reset Zoom hides itself", "visible");
			const nh = await page.evaluate(() => document.querySelectorAll("#frames > g.hide").length);
			check(nh === 0, "no frame stays hidden", nh + " hidden");
		}
	}

	const drag = arg("timeline-drag");
	if (drag) {
		const [a, b] = drag.split(",").map(Number);
		const bars = page.locator("#timeline-bars > rect");
		const nb = await bars.count();
		check(nb > Math.max(a, b), "the timeline has bars (" + nb + ")", nb + " bars");
		// the bars' boxes (a bar may be 0 px tall): x from the bar, y from the strip
		const strip = await page.locator("#timeline-bg").boundingBox();
		const ba = await bars.nth(a).boundingBox(), bb = await bars.nth(b).boundingBox();
		const y = strip.y + strip.height / 2;
		check((await text("timeline-range")).trim() === "", "no range before a selection",
		      await text("timeline-range"));
		await page.mouse.move(ba.x + ba.width / 2, y);
		await page.mouse.down();
		if (a !== b)
			await page.mouse.move(bb.x + bb.width / 2, y, { steps: 5 });
		await page.mouse.up();
		const r = await text("timeline-range");
		check(/^--range [0-9]+\.[0-9]{3}s\.\.[0-9]+\.[0-9]{3}s$/.test(r),
		      (a === b ? "a click" : "a drag") + " on the timeline shows a --range", r);
		const want = arg("timeline-range");
		if (want)
			check(r === want, "the range is " + want, r);
		const sel = await page.evaluate(() => {
			const e = document.getElementById("timeline-sel");
			return { shown: getComputedStyle(e).display !== "none", w: +e.getAttribute("width") };
		});
		const bw = await page.evaluate(() => (cfg.width - 2 * cfg.xpad) / cfg.tl.n);
		check(sel.shown && Math.abs(sel.w - (Math.abs(b - a) + 1) * bw) < 0.05,
		      "the selected span is highlighted", JSON.stringify(sel));
	}

	const literal = arg("literal");
	if (literal) {
		const r = await page.evaluate((n) => {
			const gs = [...document.querySelectorAll("#frames > g")];
			const g = gs.find((x) => x.querySelector("title").textContent === n);
			return {
				found: !!g,
				label: g ? g.querySelector("text").textContent : "",
				scripts: document.querySelectorAll("script").length,
				injected: !!window.__nt_injected,
			};
		}, literal);
		check(r.found, "the frame named " + JSON.stringify(literal) + " is a frame", "not found");
		check(r.label === literal, "its label is the literal text", JSON.stringify(r.label));
		check(r.scripts === 1, "the document has only its own script", r.scripts + " scripts");
		check(!r.injected && !dialogs.some((d) => d.startsWith("alert:")),
		      "no code from frame names ran", dialogs.join("|"));
		// hovering it shows the same text in the details line
		const f = await frameBox(literal);
		if (f) {
			await page.mouse.move(f.box.x + f.box.width / 2, f.box.y + f.box.height / 2);
			const d = await text("details");
			check(d.startsWith(literal + " ("), "hover shows the name as text", d);
		}
	}
	check(errors.length === 0, "no script errors", errors.join("; "));
	await browser.close();
}

main().catch((e) => {
	console.log("FAIL the browser session: " + String(e && e.stack || e).split("\n").slice(0, 3).join(" "));
	process.exit(0);
});
