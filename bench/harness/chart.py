"""TFLOP/s (GB/s for memory-bound kernels) against size: one panel per
(kernel, pass), one line per implementation, tessel drawn bold. matplotlib
draws PNG and SVG where it imports; otherwise a plain SVG is written here
(the GPU machine may lack matplotlib, this machine does)."""

import html
import math


def rate(r):
    return r.get("tflops") or r.get("gbps")


def panels(records):
    """{(kernel, pass): (sizes in order, {series label: {size: rate}}, unit)}
    of the charted records (no errors, no impl details with a colon)."""
    ok = [r for r in records if "error" not in r and rate(r)
          and ":" not in r.get("impl", ":")]
    out = {}
    for kernel, pass_ in sorted({(r["kernel"], r.get("pass", "fwd"))
                                 for r in ok}):
        mine = [r for r in ok if r["kernel"] == kernel
                and r.get("pass", "fwd") == pass_]
        sizes = sorted({r.get("size", "") for r in mine}, key=lambda s: min(
            (r.get("flops", 0), r.get("bytes", 0)) for r in mine
            if r.get("size", "") == s))
        series = {}
        for r in mine:
            label = " ".join(x for x in (r["impl"], r.get("dtype", ""),
                                         r.get("variant", "")) if x)
            series.setdefault(label, {})[r.get("size", "")] = rate(r)
        unit = "TFLOP/s" if any(r.get("tflops") for r in mine) else "GB/s"
        out[(kernel, pass_)] = (sizes, series, unit)
    return out


def draw(records, stem, title=""):
    """Writes STEM.svg (and STEM.png with matplotlib); says what it wrote."""
    data = panels(records)
    if not data:
        return "no chart: no successful records"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        with open(stem + ".svg", "w") as f:
            f.write(plain_svg(data, title))
        return "chart: {}.svg (plain SVG: no matplotlib)".format(stem)
    cols = min(3, len(data))
    rows = (len(data) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.2 * rows),
                             squeeze=False)
    for ax, ((kernel, pass_), (sizes, series, unit)) in zip(axes.flat,
                                                            data.items()):
        for label, points in sorted(series.items()):
            xs = [i for i, s in enumerate(sizes) if s in points]
            tessel = label.startswith("tessel")
            ax.plot(xs, [points[sizes[i]] for i in xs], marker="o",
                    linewidth=2.5 if tessel else 1.2,
                    linestyle="-" if tessel else "--", label=label)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels(sizes, rotation=15, fontsize=8)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(unit)
        ax.set_title("{} {}".format(kernel, pass_))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(data):]:
        ax.axis("off")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig("{}.{}".format(stem, ext), dpi=120)
    plt.close(fig)
    return "chart: {}.png and .svg".format(stem)


COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
W, H = 460, 320  # one panel
LEFT, RIGHT, TOP, BOTTOM = 60, 150, 30, 60


def plain_svg(data, title=""):
    cols = min(3, len(data))
    rows = (len(data) + cols - 1) // cols
    head = 24 if title else 0
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" '
           'font-family="sans-serif" font-size="10">'.format(
               W * cols, H * rows + head),
           '<rect width="100%" height="100%" fill="white"/>']
    if title:
        out.append('<text x="8" y="16" font-size="14">{}</text>'.format(
            html.escape(title)))
    for n, ((kernel, pass_), panel) in enumerate(data.items()):
        x0, y0 = W * (n % cols), H * (n // cols) + head
        out += _panel(x0, y0, "{} {}".format(kernel, pass_), *panel)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _panel(x0, y0, name, sizes, series, unit):
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    top = max(v for s in series.values() for v in s.values())
    step = 10 ** math.floor(math.log10(top)) if top > 0 else 1
    ymax = math.ceil(top / step) * step or 1

    def x(i):
        return x0 + LEFT + (pw * (i + 0.5) / len(sizes))

    def y(v):
        return y0 + TOP + ph * (1 - v / ymax)
    out = ['<text x="{}" y="{}" font-size="12">{}</text>'.format(
        x0 + LEFT, y0 + 18, html.escape(name)),
        '<rect x="{}" y="{}" width="{}" height="{}" fill="none" '
        'stroke="#888"/>'.format(x0 + LEFT, y0 + TOP, pw, ph),
        '<text x="{}" y="{}" transform="rotate(-90 {} {})">{}</text>'.format(
            x0 + 14, y0 + TOP + ph / 2, x0 + 14, y0 + TOP + ph / 2, unit)]
    for k in range(5):
        v = ymax * k / 4
        out.append('<text x="{}" y="{}" text-anchor="end">{:g}</text>'.format(
            x0 + LEFT - 4, y(v) + 3, round(v, 3)))
    for i, s in enumerate(sizes):
        out.append('<text x="{}" y="{}" text-anchor="end" transform="rotate'
                   '(-25 {} {})">{}</text>'.format(
                       x(i), y0 + TOP + ph + 14, x(i), y0 + TOP + ph + 14,
                       html.escape(s)))
    for n, (label, points) in enumerate(sorted(series.items())):
        colour = COLOURS[n % len(COLOURS)]
        tessel = label.startswith("tessel")
        xy = [(x(i), y(points[s])) for i, s in enumerate(sizes)
              if s in points]
        out.append('<polyline fill="none" stroke="{}" stroke-width="{}"{} '
                   'points="{}"/>'.format(
                       colour, 2.5 if tessel else 1.2,
                       "" if tessel else ' stroke-dasharray="5,3"',
                       " ".join("{:.1f},{:.1f}".format(*p) for p in xy)))
        out += ['<circle cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}"/>'.format(
            px, py, colour) for px, py in xy]
        ly = y0 + TOP + 12 * n + 8
        out.append('<text x="{}" y="{}" fill="{}">{}</text>'.format(
            x0 + LEFT + pw + 6, ly, colour, html.escape(label)))
    return out
