// SPDX-License-Identifier: MIT
// export-svg.js - the script of nettrace-flame's SVG (export-svg.c embeds it in a CDATA
// section, after the frames; it must never contain the CDATA terminator).
// The SVG defines `cfg` before this text: layout (xpad, width, fh, icicle, top, bottom),
// totals (total, btotal, diff) and the unit. Each frame is <g v=TOTAL s=SELF o=OFFSET
// [b=BASE bs=BASESELF] [c=CATEGORY]><title>NAME</title><rect/><text/></g> inside
// #frames, OFFSET and TOTAL in the unit, from the left edge of the root.
// Features: hover details (total, self, %), click to zoom, Reset Zoom, search by regexp
// (Search button, Ctrl-F or F3; Escape clears) with highlight and matched %, ignore case.
// Names are only ever read and written as text (textContent), never parsed as markup.
// With cfg.tl ({n, start, end, y, h}: buckets, their [start, end) in ns since the session
// start, the strip's top and height), #timeline is a strip of the sample density: a drag
// (or a click, one bucket) selects a span, highlighted by #timeline-sel, and
// #timeline-range shows the --range that selects it ("--range 1.250s..2.500s").
(function () {
	"use strict";
	var doc = document;
	var frames = doc.getElementById("frames");
	var details = doc.getElementById("details");
	var unzoomBtn = doc.getElementById("unzoom");
	var searchBtn = doc.getElementById("search");
	var icBtn = doc.getElementById("ignorecase");
	var matchedText = doc.getElementById("matched");
	var plotw = cfg.width - 2 * cfg.xpad;
	var fontw = cfg.fontsize * 0.59;
	var searching = null, ignorecase = false, zoomed = null;
	var all = null;

	// Frame records, built on first use: the document may hold tens of thousands.
	function records() {
		if (all)
			return all;
		all = [];
		var gs = frames.children;
		for (var i = 0; i < gs.length; i++) {
			var g = gs[i];
			var r = g.querySelector("rect");
			all.push({
				g: g, rect: r, text: g.querySelector("text"),
				name: g.querySelector("title").textContent,
				v: +g.getAttribute("v"), o: +g.getAttribute("o"),
				y: +r.getAttribute("y"), fill: r.getAttribute("fill")
			});
			g.fgIndex = i;
		}
		return all;
	}
	function rec(g) {
		records();
		return all[g.fgIndex];
	}
	function depthOf(f) {
		return cfg.icicle ? Math.round((f.y - cfg.top) / cfg.fh)
				  : Math.round((cfg.bottom - f.y) / cfg.fh) - 1;
	}
	function fmt(v) {
		if (cfg.unit === "samples") {
			var s = Math.abs(v - Math.round(v)) < 1e-9 ? String(Math.round(v)) : v.toFixed(2);
			return s + (Math.round(v) === 1 ? " sample" : " samples");
		}
		var ns = v * (cfg.unit === "us" ? 1e3 : cfg.unit === "ms" ? 1e6 : 1);
		var a = Math.abs(ns);
		if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
		if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
		if (a >= 1e3) return (ns / 1e3).toFixed(3) + " us";
		return ns.toFixed(0) + " ns";
	}
	function pct(v, t) {
		return t > 0 ? (100 * v / t).toFixed(2) + "%" : "0%";
	}
	function frameOf(e) {
		var n = e.target;
		while (n && n !== frames) {
			if (n.parentNode === frames)
				return n;
			n = n.parentNode;
		}
		return null;
	}
	function describe(g) {
		var f = rec(g);
		var self = +g.getAttribute("s");
		var t = f.name + " (total " + fmt(f.v) + ", " + pct(f.v, cfg.total) + "; self " +
			fmt(self) + ", " + pct(self, cfg.total) + ")";
		if (cfg.diff) {
			var b = +(g.getAttribute("b") || 0);
			var d = (cfg.total > 0 ? 100 * f.v / cfg.total : 0) -
				(cfg.btotal > 0 ? 100 * b / cfg.btotal : 0);
			t += "; base " + fmt(b) + ", " + pct(b, cfg.btotal) + "; change " +
				(d >= 0 ? "+" : "") + d.toFixed(2) + " pp";
		}
		var c = g.getAttribute("c");
		if (c)
			t += "; " + c;
		return t;
	}

	// ---- labels: as many characters as fit, ".." when cut
	function label(f, w) {
		var n = Math.floor((w - 6) / fontw);
		var s = f.name;
		if (n < 3)
			s = "";
		else if (s.length > n)
			s = s.substring(0, n - 2) + "..";
		if (f.text.textContent !== s)
			f.text.textContent = s;
	}
	function place(f, x, w) {
		f.rect.setAttribute("x", x.toFixed(2));
		f.rect.setAttribute("width", w.toFixed(2));
		f.text.setAttribute("x", (x + 3).toFixed(2));
		label(f, w);
	}

	// ---- zoom
	function zoom(g) {
		var fs = records(), z = rec(g), zd = depthOf(z);
		var eps = cfg.total * 1e-9;
		var ratio = z.v > 0 ? plotw / z.v : 0;
		for (var i = 0; i < fs.length; i++) {
			var f = fs[i], d = depthOf(f);
			f.g.classList.remove("hide");
			f.g.classList.remove("parent");
			if (d <= zd && f.o <= z.o + eps && f.o + f.v >= z.o + z.v - eps) {
				if (d < zd)
					f.g.classList.add("parent");
				place(f, cfg.xpad, plotw);
			} else if (d > zd && f.o >= z.o - eps && f.o + f.v <= z.o + z.v + eps) {
				place(f, cfg.xpad + (f.o - z.o) * ratio, f.v * ratio);
			} else {
				f.g.classList.add("hide");
			}
		}
		zoomed = z;
		unzoomBtn.classList.remove("hide");
	}
	function unzoom() {
		var fs = records(), k = cfg.total > 0 ? plotw / cfg.total : 0;
		for (var i = 0; i < fs.length; i++) {
			var f = fs[i];
			f.g.classList.remove("hide");
			f.g.classList.remove("parent");
			place(f, cfg.xpad + f.o * k, f.v * k);
		}
		zoomed = null;
		unzoomBtn.classList.add("hide");
	}

	// ---- search
	function clearSearch() {
		var fs = records();
		for (var i = 0; i < fs.length; i++)
			fs[i].rect.setAttribute("fill", fs[i].fill);
		searching = null;
		searchBtn.classList.remove("show");
		searchBtn.textContent = "Search";
		matchedText.classList.add("hide");
		matchedText.textContent = " ";
	}
	function search(term) {
		if (term === null || term === undefined || term === "")
			return;
		var re;
		try {
			re = new RegExp(term, ignorecase ? "i" : "");
		} catch (err) {
			re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), ignorecase ? "i" : "");
		}
		var fs = records(), spans = [];
		for (var i = 0; i < fs.length; i++) {
			var f = fs[i];
			if (re.test(f.name)) {
				f.rect.setAttribute("fill", cfg.searchcolor);
				spans.push([f.o, f.o + f.v]);
			} else {
				f.rect.setAttribute("fill", f.fill);
			}
		}
		// matched weight: the union of the matching frames' spans (a match nested in
		// another match is counted once)
		spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
		var sum = 0, end = -Infinity;
		for (var j = 0; j < spans.length; j++) {
			var s = spans[j];
			if (s[0] >= end) {
				sum += s[1] - s[0];
				end = s[1];
			} else if (s[1] > end) {
				sum += s[1] - end;
				end = s[1];
			}
		}
		searching = term;
		searchBtn.classList.add("show");
		searchBtn.textContent = "Reset Search";
		matchedText.classList.remove("hide");
		matchedText.textContent = "Matched: " + pct(sum, cfg.total) + " (" + spans.length +
			(spans.length === 1 ? " frame)" : " frames)");
	}
	function searchPrompt() {
		if (searching) {
			clearSearch();
			return;
		}
		var term = window.prompt("Search for a frame (regular expression)", "");
		search(term);
	}

	// ---- events
	frames.addEventListener("mouseover", function (e) {
		var g = frameOf(e);
		if (g)
			details.textContent = describe(g);
	});
	frames.addEventListener("mouseout", function (e) {
		if (frameOf(e))
			details.textContent = " ";
	});
	frames.addEventListener("click", function (e) {
		var g = frameOf(e);
		if (!g)
			return;
		if (rec(g).v >= cfg.total - cfg.total * 1e-9 && depthOf(rec(g)) === 0)
			unzoom();
		else
			zoom(g);
	});
	unzoomBtn.addEventListener("click", unzoom);
	searchBtn.addEventListener("click", searchPrompt);
	icBtn.addEventListener("click", function () {
		ignorecase = !ignorecase;
		icBtn.classList.toggle("show", ignorecase);
		if (searching) {
			var t = searching;
			search(t);
		}
	});
	window.addEventListener("keydown", function (e) {
		if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {
			e.preventDefault();
			searchPrompt();
		} else if (e.keyCode === 27 && searching) {
			clearSearch();
		}
	});

	// ---- timeline: select a span of buckets, show its --range
	var tlSel = null, tlDrag = null;
	function tlBucket(e) {
		var svg = doc.documentElement, x;
		if (svg.createSVGPoint && svg.getScreenCTM && svg.getScreenCTM()) {
			var pt = svg.createSVGPoint();
			pt.x = e.clientX;
			pt.y = e.clientY;
			x = pt.matrixTransform(svg.getScreenCTM().inverse()).x;
		} else {
			x = e.clientX;
		}
		var b = Math.floor((x - cfg.xpad) / plotw * cfg.tl.n);
		return Math.max(0, Math.min(cfg.tl.n - 1, b));
	}
	function tlSecs(ns, up) {
		var ms = up ? Math.ceil(ns / 1e6) : Math.floor(ns / 1e6);
		return (ms / 1e3).toFixed(3) + "s";
	}
	// Selects buckets a..b (inclusive, either order); returns the --range text.
	function tlSelect(a, b) {
		if (!cfg.tl)
			return null;
		var lo = Math.max(0, Math.min(a, b)), hi = Math.min(cfg.tl.n - 1, Math.max(a, b));
		var bw = plotw / cfg.tl.n, span = cfg.tl.end - cfg.tl.start;
		var sel = doc.getElementById("timeline-sel");
		sel.setAttribute("x", (cfg.xpad + lo * bw).toFixed(2));
		sel.setAttribute("width", ((hi - lo + 1) * bw).toFixed(2));
		sel.classList.remove("hide");
		var t0 = cfg.tl.start + span * lo / cfg.tl.n;
		var t1 = cfg.tl.start + span * (hi + 1) / cfg.tl.n;
		tlSel = "--range " + tlSecs(t0, false) + ".." + tlSecs(t1, true);
		doc.getElementById("timeline-range").textContent = tlSel;
		return tlSel;
	}
	var timeline = doc.getElementById("timeline");
	if (cfg.tl && timeline) {
		timeline.addEventListener("mousedown", function (e) {
			e.preventDefault();
			tlDrag = tlBucket(e);
			tlSelect(tlDrag, tlDrag);
		});
		window.addEventListener("mousemove", function (e) {
			if (tlDrag !== null)
				tlSelect(tlDrag, tlBucket(e));
		});
		window.addEventListener("mouseup", function (e) {
			if (tlDrag !== null) {
				tlSelect(tlDrag, tlBucket(e));
				tlDrag = null;
			}
		});
	}

	// for scripts and tests driving the page
	window.flamegraph = {
		search: search, clearSearch: clearSearch, zoom: zoom, unzoom: unzoom,
		describe: describe,
		zoomed: function () { return zoomed ? zoomed.name : null; },
		searching: function () { return searching; },
		timelineSelect: tlSelect,
		timelineRange: function () { return tlSel; }
	};
	var m = /[?&]s=([^&]*)/.exec(window.location.search);
	if (m)
		search(decodeURIComponent(m[1]));
})();
