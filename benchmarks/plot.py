#!/usr/bin/env python3
"""PNG plots of HComm's benchmark results, from their JSON files.

Two kinds of file, told apart by their contents (all files of one plot must be
of one kind):

  hcomm-perf --json FILE     an array of rows, one per size (keys collective,
                             dtype, op, root, ranks, inplace, blocking, buffers,
                             fresh_inputs, size_bytes, count, iterations, time_us,
                             algbw_gbps, busbw_gbps, wrong, algorithm, forced):
                             time and bus bandwidth against size, one series per
                             file.
  JSON=FILE compare_mpi.sh   an object of schema "hcomm-compare-mpi/1" (see the
                             header of benchmarks/compare_mpi.sh): time against
                             size for HComm, Open MPI and MPICH, and HComm's time
                             over the faster MPI's (below 1: HComm faster).

Examples:
  plot.py a.json -o a.png
  plot.py base.json new.json --label base --label new -o ab.png
  plot.py compare.json -o compare.png
"""

import argparse
import json
import os
import sys

PERF_KEYS = ("collective", "dtype", "op", "root", "ranks", "inplace", "blocking", "buffers", "fresh_inputs",
             "size_bytes", "count", "iterations", "time_us", "algbw_gbps", "busbw_gbps", "wrong", "algorithm",
             "forced")
MPI_SCHEMA = "hcomm-compare-mpi/1"
MPI_ROW_KEYS = ("collective", "ranks", "inputs", "buffers", "size_bytes", "hcomm_us", "openmpi_us", "mpich_us",
                "algorithm")
# Descriptions of a hcomm-perf run: shared ones go to the title, the others to each series' label.
PERF_CONFIG = ("collective", "dtype", "op", "ranks", "buffers", "fresh_inputs", "inplace", "blocking", "stream",
               "forced")
# hcomm_mpi_us (HComm through its MPI face) is absent from older files.
LIBRARIES = (("hcomm_us", "HComm", "tab:blue"), ("hcomm_mpi_us", "HComm's MPI", "tab:purple"),
             ("openmpi_us", "Open MPI", "tab:orange"), ("mpich_us", "MPICH", "tab:green"))
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


class InputError(Exception):
    """A file that cannot be plotted: the message names the file and what is wrong."""


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file")
    except OSError as e:
        raise InputError(f"{path}: cannot read it: {e.strerror}")
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno}, column {e.colno})")
    if isinstance(data, list):
        return "perf", check_perf(path, data)
    if isinstance(data, dict) and data.get("schema") == MPI_SCHEMA:
        return "mpi", check_mpi(path, data)
    if isinstance(data, dict) and "schema" in data:
        raise InputError(f"{path}: schema {data['schema']!r} is not one this script reads (expected {MPI_SCHEMA!r})")
    raise InputError(f"{path}: neither hcomm-perf --json output (an array of rows) nor compare_mpi.sh's JSON "
                     f"(an object with \"schema\": \"{MPI_SCHEMA}\")")


def check_rows(path, rows, keys, numeric, what):
    if not rows:
        raise InputError(f"{path}: {what} has no rows")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InputError(f"{path}: {what}, row {i}: expected an object, found {type(row).__name__}")
        missing = [k for k in keys if k not in row]
        if missing:
            raise InputError(f"{path}: {what}, row {i}: missing key(s) {', '.join(missing)}")
        for k in numeric:
            if row[k] is not None and not is_number(row[k]):
                raise InputError(f"{path}: {what}, row {i}: {k} is {row[k]!r}, expected a number")
        if not is_number(row["size_bytes"]) or row["size_bytes"] <= 0:
            raise InputError(f"{path}: {what}, row {i}: size_bytes is {row['size_bytes']!r}, expected a positive number")
    return sorted(rows, key=lambda r: r["size_bytes"])


def check_perf(path, rows):
    rows = check_rows(path, rows, PERF_KEYS, ("time_us", "busbw_gbps", "algbw_gbps"), "hcomm-perf --json output")
    wrong = sum(r["wrong"] for r in rows if is_number(r["wrong"]))
    if wrong:
        print(f"plot.py: warning: {path}: {wrong} wrong elements: these results were not correct", file=sys.stderr)
    return {"rows": rows}


def check_mpi(path, doc):
    rows = doc.get("rows")
    if not isinstance(rows, list):
        raise InputError(f"{path}: compare_mpi.sh JSON without a \"rows\" array")
    doc = dict(doc)
    doc["rows"] = check_rows(path, rows, MPI_ROW_KEYS, ("hcomm_us", "openmpi_us", "mpich_us"),
                             "compare_mpi.sh JSON")
    if not any(faster_mpi(r) for r in doc["rows"]):
        raise InputError(f"{path}: compare_mpi.sh JSON with neither Open MPI's nor MPICH's times")
    return doc


def faster_mpi(row):
    """The faster of the MPIs that ran at this size, or None."""
    times = [row[k] for k in ("openmpi_us", "mpich_us") if is_number(row.get(k)) and row[k] > 0]
    return min(times) if times else None


def size_label(value, _pos=None):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


def setup_size_axis(ax):
    from matplotlib.ticker import FuncFormatter, LogLocator
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=4))
    ax.xaxis.set_major_formatter(FuncFormatter(size_label))
    ax.set_xlabel("size (bytes)")
    ax.grid(True, which="major", alpha=0.3)


def describe(rows):
    first = rows[0]
    return {k: first.get(k) for k in PERF_CONFIG}


def config_text(config):
    parts = []
    for k, v in config.items():
        if k == "ranks":
            parts.append(f"{v} ranks")
        elif k in ("fresh_inputs", "inplace", "blocking"):
            parts.append({"fresh_inputs": ("fresh inputs", "reused inputs"), "inplace": ("in place", "out of place"),
                          "blocking": ("blocking", "nonblocking")}[k][0 if v else 1])
        elif k == "forced":
            if v:
                parts.append(f"forced {v}")
        elif k == "stream":  # absent from files before hcomm-perf --stream
            if v:
                parts.append("stream-ordered")
        elif k == "buffers":
            parts.append(f"{v} buffers")
        elif v is not None:
            parts.append(str(v))
    return ", ".join(parts)


def plot_perf(files, labels, output):
    import matplotlib.pyplot as plt
    configs = [describe(data["rows"]) for _, data in files]
    shared = {k: v for k, v in configs[0].items() if all(c[k] == v for c in configs)}
    fig, (ax_time, ax_bw) = plt.subplots(2, 1, figsize=(9, 9), sharex=True)
    for i, ((path, data), label, config) in enumerate(zip(files, labels, configs)):
        rows = data["rows"]
        extra = config_text({k: v for k, v in config.items() if k not in shared})
        name = f"{label} ({extra})" if extra else label
        sizes = [r["size_bytes"] for r in rows]
        style = dict(linestyle=LINE_STYLES[i % len(LINE_STYLES)], marker=MARKERS[i % len(MARKERS)], markersize=4)
        ax_time.plot(sizes, [r["time_us"] for r in rows], label=name, **style)
        ax_bw.plot(sizes, [r["busbw_gbps"] for r in rows], label=name, **style)
    ax_time.set_yscale("log")
    ax_time.set_ylabel("time per call (us)")
    ax_bw.set_ylabel("bus bandwidth (GB/s)")
    for ax in (ax_time, ax_bw):
        setup_size_axis(ax)
        ax.legend(fontsize="small")
    ax_time.set_xlabel("")
    fig.suptitle(f"hcomm-perf: {config_text(shared)}" if shared else "hcomm-perf")
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)


def mpi_config(doc):
    r = doc["rows"][0]
    return f"{r['collective']}, {r['ranks']} ranks, {r['inputs']} inputs, {r['buffers']} buffers"


def mpi_provenance(doc):
    machine = doc.get("machine") or {}
    cores = f"{machine['cores']} cores" if "cores" in machine else None
    return ", ".join(str(x) for x in (machine.get("cpu"), cores, doc.get("date"), doc.get("commit")) if x)


def plot_mpi(files, labels, output):
    import matplotlib.pyplot as plt
    fig, (ax_time, ax_ratio) = plt.subplots(2, 1, figsize=(9, 9), sharex=True,
                                            gridspec_kw={"height_ratios": [3, 2]})
    several = len(files) > 1
    configs = [mpi_config(doc) for _, doc in files]
    if several and len(set(configs)) > 1:
        labels = [f"{label} ({config})" for label, config in zip(labels, configs)]
    for i, ((path, doc), label) in enumerate(zip(files, labels)):
        rows = doc["rows"]
        sizes = [r["size_bytes"] for r in rows]
        style = dict(linestyle=LINE_STYLES[i % len(LINE_STYLES)], marker=MARKERS[i % len(MARKERS)], markersize=4)
        for key, name, color in LIBRARIES:
            points = [(s, r[key]) for s, r in zip(sizes, rows) if is_number(r.get(key))]
            if points:
                ax_time.plot([p[0] for p in points], [p[1] for p in points], color=color,
                             label=f"{label}: {name}" if several else name, **style)
        for key, name, color in LIBRARIES[:2]:
            ratio = [(s, r[key] / faster_mpi(r)) for s, r in zip(sizes, rows)
                     if is_number(r.get(key)) and r[key] > 0 and faster_mpi(r)]
            if ratio:
                ax_ratio.plot([p[0] for p in ratio], [p[1] for p in ratio], color=None if several else color,
                              label=f"{label}: {name}" if several else name, **style)
    ax_time.set_yscale("log")
    ax_time.set_ylabel("time per call (us)")
    ax_time.legend(fontsize="small")
    ax_ratio.axhline(1.0, color="black", linewidth=1)
    ax_ratio.set_yscale("log", base=2)
    from matplotlib.ticker import FuncFormatter
    ax_ratio.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax_ratio.set_ylabel("time / faster MPI's (below 1: HComm faster)")
    ax_ratio.legend(fontsize="small")
    for ax in (ax_time, ax_ratio):
        setup_size_axis(ax)
    ax_time.set_xlabel("")
    if not several:
        provenance = mpi_provenance(files[0][1])
        fig.suptitle(configs[0] + (f"\n{provenance}" if provenance else ""))
    else:
        same = len(set(configs)) == 1
        fig.suptitle("HComm against Open MPI and MPICH" + (f": {configs[0]}" if same else ""))
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="JSON results: hcomm-perf --json files, or compare_mpi.sh JSON files")
    parser.add_argument("-o", "--output", metavar="PNG",
                        help="the plot to write (default: the first FILE with .png for .json)")
    parser.add_argument("--label", action="append", default=[], metavar="TEXT",
                        help="the series name of a FILE, once per FILE in their order (default: the file's name)")
    args = parser.parse_args(argv)
    if args.label and len(args.label) != len(args.files):
        parser.error(f"{len(args.label)} --label given for {len(args.files)} files: give one per file or none")
    if not args.output:
        root, _ = os.path.splitext(args.files[0])
        args.output = root + ".png"
    if not args.output.lower().endswith(".png"):
        parser.error(f"--output {args.output}: expected a .png file name")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        parser.error(f"--output {args.output}: the folder {out_dir} does not exist")
    return args


def main(argv):
    args = parse_args(argv)
    try:
        loaded = [(path, *load(path)) for path in args.files]
    except InputError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    kinds = {kind for _, kind, _ in loaded}
    if len(kinds) > 1:
        print("plot.py: the files mix hcomm-perf and compare_mpi.sh results: plot each kind on its own",
              file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        print(f"plot.py: matplotlib is missing for {sys.executable}: on Debian, apt-get install python3-matplotlib "
              "(and run /usr/bin/python3)", file=sys.stderr)
        return 1
    labels = args.label or [os.path.splitext(os.path.basename(p))[0] for p in args.files]
    files = [(path, data) for path, _, data in loaded]
    (plot_perf if kinds == {"perf"} else plot_mpi)(files, labels, args.output)
    print(f"plot.py: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
