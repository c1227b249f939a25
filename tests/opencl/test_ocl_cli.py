#!/usr/bin/env python3
"""test_ocl_cli.py BALLPIT - the OpenCL engine through the real command line.

- No OpenCL platform (OCL_ICD_VENDORS pointing at an empty folder): both
  `--headless gas --frames 1 --backend opencl` and `--list-devices` fail
  with one line on stderr saying why; headless exits with status 3.
- With a device: `--list-devices` numbers it; `--stats` names it; dumps of
  two OpenCL runs are the same bytes; the OpenCL dump agrees with the CPU
  dump ball by ball within the 10-frame parity tolerance; an injected kernel
  build failure and an injected step fault (BALLPIT_OCL_FAIL) exit with
  status 3 and a one-line reason, the build failure after the full log;
  BALLPIT_OCL_BUILDLOG=1 prints the build log and a line for each kernel;
  BALLPIT_OCL_NVREG=N is said to be ignored off NVIDIA's platform, and a
  value out of 0..255 is refused.
Exit 77 (skip) for the device part when no OpenCL device is usable.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        FAILS.append(what)


def run(args, env_extra=None, unset=()):
    env = dict(os.environ)
    for k in unset:
        env.pop(k, None)
    env.update(env_extra or {})
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=240)


def last_lines(text):
    return [l for l in text.splitlines() if l.strip()]


def read_dump(path):
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def main():
    tmp = tempfile.mkdtemp(prefix='ballpit-ocl-')
    try:
        return checks(sys.argv[1], tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def checks(exe, tmp):
    empty = os.path.join(tmp, 'no-vendors')
    os.mkdir(empty)

    p = run([exe, '--list-devices'], unset=('BALLPIT_OCL_FAIL',))
    if 'built without OpenCL' in p.stderr:
        # The stub says so for every OpenCL request, with status 3.
        p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl'])
        check(p.returncode == 3 and len(last_lines(p.stderr)) == 1 and
              'built without OpenCL' in p.stderr,
              'without OpenCL: --backend opencl exits 3 with one line (%d, %r)'
              % (p.returncode, p.stderr))
        print('skip: this ballpit was built without OpenCL')
        return 1 if FAILS else 77

    # --- no platform at all ------------------------------------------------
    p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl'],
            {'OCL_ICD_VENDORS': empty}, unset=('BALLPIT_OCL_FAIL',))
    err = last_lines(p.stderr)
    check(p.returncode == 3, 'no platform: --backend opencl exits 3 (got %d)' % p.returncode)
    check(len(err) == 1 and 'OpenCL' in err[0] and 'platform' in err[0],
          'no platform: one line naming OpenCL and the platform: %r' % p.stderr)
    check(p.stdout == '', 'no platform: nothing on stdout')
    p = run([exe, '--list-devices'], {'OCL_ICD_VENDORS': empty})
    check(p.returncode != 0 and len(last_lines(p.stderr)) == 1,
          'no platform: --list-devices fails with one line (%d, %r)' % (p.returncode, p.stderr))
    # The CPU engine does not care.
    p = run([exe, '--headless', 'gas', '--frames', '1', '--stats'], {'OCL_ICD_VENDORS': empty})
    check(p.returncode == 0, 'no platform: the CPU backend still runs')

    # --- with a device -----------------------------------------------------
    p = run([exe, '--list-devices'], unset=('BALLPIT_OCL_FAIL',))
    devices = [l for l in p.stdout.splitlines() if l[:1].isdigit()]
    if p.returncode != 0 or not devices:
        print('skip: no usable OpenCL device: %s' % p.stderr.strip())
        return 1 if FAILS else 77
    check(devices[0].startswith('0: '), '--list-devices numbers from 0: %r' % devices[0])

    dumps = []
    for k in range(2):
        path = os.path.join(tmp, 'ocl%d.csv' % k)
        p = run([exe, '--headless', 'pile', '--frames', '10', '--backend', 'opencl',
                 '--dump', path, '--stats'], unset=('BALLPIT_OCL_FAIL',))
        check(p.returncode == 0, 'opencl run %d exits 0 (%r)' % (k, p.stderr))
        if p.returncode != 0:
            return 1
        stats = json.loads(p.stdout.strip().splitlines()[-1])
        check(stats['backend'] == 'opencl' and stats['device'] and
              stats['device'] in p.stdout and stats['device'] in ''.join(devices),
              'stats names the device: %r' % stats.get('device'))
        check(stats['escaped'] == 0 and stats['nonfinite'] == 0, 'opencl: nothing escaped')
        with open(path, 'rb') as f:
            dumps.append(f.read())
    check(dumps[0] == dumps[1] and len(dumps[0]) > 1000,
          'two OpenCL runs give the same dump bytes')

    # The bench's read-back phase is a read of the state, timed, for both
    # engines: the OpenCL engine's copies it from the device, so it costs
    # something; it is no part of ms/frame.
    # With --bench-runs, each row's two engines run one after the other,
    # and the OpenCL row gives its speed over the CPU engine's run by run
    # (the CPU row's ms/frame over its own, per run) and their median.
    js = os.path.join(tmp, 'bench.json')
    p = run([exe, '--bench', '--bench-sizes', '2000', '--bench-frames', '2',
             '--bench-runs', '3', '--bench-draw', '0', '--bench-json', js],
            unset=('BALLPIT_OCL_FAIL',))
    check(p.returncode == 0, 'bench of both engines exits 0 (%r)' % p.stderr)
    if p.returncode == 0:
        rows = [json.loads(l) for l in open(js).read().splitlines()]
        check([(r['scene'], r['backend']) for r in rows] ==
              [('rain', 'cpu'), ('rain', 'opencl'), ('pile', 'cpu'), ('pile', 'opencl')],
              'bench: each row\'s engines together: %r' %
              [(r['scene'], r['backend']) for r in rows])
        ocl = [r for r in rows if r['backend'] == 'opencl']
        check(len(ocl) == 2 and all(0 < r['readback_ms'] < 1000 for r in ocl),
              'bench: the OpenCL rows time a read-back: %r' %
              [(r['scene'], r['readback_ms']) for r in ocl])
        for c, o in zip(rows[0::2], rows[1::2]):
            check('speed_vs_cpu' not in c, 'bench: a CPU row has no speed over itself')
            want = [a / b for a, b in zip(c['ms_per_frame_runs'], o['ms_per_frame_runs'])]
            got = o.get('speed_vs_cpu_runs', [])
            check(len(got) == 3 and all(abs(g - w) <= 1e-9 * w for g, w in zip(got, want)),
                  'bench: %s speed_vs_cpu_runs %r, the runs\' ratios %r' %
                  (o['scene'], got, want))
            check(o.get('speed_vs_cpu') == sorted(got)[1],
                  'bench: %s speed_vs_cpu %r not the median of %r' %
                  (o['scene'], o.get('speed_vs_cpu'), got))
        lines = [l for l in p.stdout.splitlines() if 'speed over the cpu row' in l]
        check(len(lines) == 2, 'bench: a speed line under each OpenCL row: %r' % p.stdout)

    # On a CPU device the steps after the first run by bp_k_steps, one
    # launch each unless its groups end it early (BALLPIT_OCL_PROFILE says
    # so). With more work-groups than PoCL runs at once (nproc + 1) they
    # cannot all start: every launch is called off and one group runs that
    # sub-step (on PoCL's pthread device; the engine's own threads on its
    # basic device all start, taking turns on the cores); the dump is the
    # same bytes.
    def team_lines(stderr):
        return [tuple(int(v) for v in m) for m in re.findall(
            r'by bp_k_steps, \d+ groups: (\d+) launch(?:es)?, (\d+) called off', stderr)]
    if devices[0].rstrip().endswith('(CPU)'):
        # PoCL's threads pinned (POCL_AFFINITY, ballpit's default, made
        # sure of): unpinned, a woken thread may wait a few ms on the busy
        # core and the launch is called off (docs/opencl.md); this test
        # runs alone (meson.build). In creation order (--keep-order): a
        # re-sort by place (every 128 sub-steps) cuts a frame's step in two
        # calls, each with a line of its own.
        prof = {'BALLPIT_OCL_PROFILE': '1', 'POCL_AFFINITY': '1'}
        kept = os.path.join(tmp, 'kept.csv')
        p = run([exe, '--headless', 'pile', '--frames', '10', '--backend', 'opencl',
                 '--keep-order', '--dump', kept], prof,
                unset=('BALLPIT_OCL_FAIL', 'BALLPIT_OCL_SYNC', 'BALLPIT_OCL_GROUPS'))
        steps = team_lines(p.stderr)
        # PoCL's basic device, the default where ballpit set POCL_DEVICES:
        # the engine's own threads run the groups, every step by
        # bp_k_steps (docs/opencl.md, "The team's threads")
        own = '/ basic-' in devices[0]
        want = 10 if own else 9
        check(p.returncode == 0 and len(steps) == want and (1, 0) in steps,
              'CPU device: %d steps by bp_k_steps, whole steps in one launch (%r)' %
              (want, steps))
        path = os.path.join(tmp, 'off.csv')
        p = run([exe, '--headless', 'pile', '--frames', '10', '--backend', 'opencl',
                 '--keep-order', '--dump', path],
                dict(prof, BALLPIT_OCL_GROUPS=str(os.cpu_count() + 1)),
                unset=('BALLPIT_OCL_FAIL', 'BALLPIT_OCL_SYNC'))
        steps = team_lines(p.stderr)
        if own:  # the engine's threads share the cores: slow, and the same bits
            check(p.returncode == 0 and len(steps) == want,
                  'too many groups: own threads time-sliced, every step by bp_k_steps '
                  '(%r)' % steps)
        else:
            check(p.returncode == 0 and len(steps) == 9 and
                  all(off >= 1 and l == 2 * off for l, off in steps),
                  'too many groups: every launch called off, then one group (%r)' % steps)
        with open(path, 'rb') as f, open(kept, 'rb') as g:
            check(f.read() == g.read(), 'called off: the same dump bytes')
    p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl'],
            {'BALLPIT_OCL_SYNC': 'fast'})
    check(p.returncode == 3 and 'BALLPIT_OCL_SYNC=fast is not spin or kernels' in p.stderr,
          'a bad BALLPIT_OCL_SYNC is named (%r)' % p.stderr)

    # BALLPIT_OCL_BUILDLOG=1: the build log and a line for each kernel
    # (tuning; on NVIDIA's platform the log has each kernel's registers)
    p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl'],
            {'BALLPIT_OCL_BUILDLOG': '1'})
    kern = dict(re.findall(r'^ballpit: opencl kernel (bp_k_\w+): (.*)$', p.stderr, re.M))
    check(p.returncode == 0 and 'OpenCL build log of kernels/ballpit.cl' in p.stderr and
          'bp_k_contacts' in kern and 'bp_k_move' in kern and
          all(re.match(r'\d+ bytes private a work-item, \d+ local a work-group, '
                       r'work-groups of up to [1-9]\d*$', v) for v in kern.values()),
          'BALLPIT_OCL_BUILDLOG=1 prints the build log and each kernel (%r)' % p.stderr[-400:])
    p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl'],
            {'BALLPIT_OCL_BUILDLOG': 'yes'})
    check(p.returncode == 3 and 'BALLPIT_OCL_BUILDLOG=yes is not 1 or 0' in p.stderr,
          'a bad BALLPIT_OCL_BUILDLOG is named (%r)' % p.stderr)

    # BALLPIT_OCL_NVREG=N: NVIDIA's register cap (tuning); a device
    # without NVIDIA's compiler options says it is ignored and runs as
    # without it; a value out of range is refused
    p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl', '--stats'],
            {'BALLPIT_OCL_NVREG': '128'})
    check(p.returncode == 0 and ('cl_nv_compiler_options' in p.stderr) ==
          ('NVIDIA' not in p.stdout) and '"backend":"opencl"' in p.stdout,
          'BALLPIT_OCL_NVREG=128 runs, and says where it is ignored (%r)' % p.stderr[-300:])
    p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl'],
            {'BALLPIT_OCL_NVREG': '256'})
    check(p.returncode == 3 and 'BALLPIT_OCL_NVREG=256 is not 0..255' in p.stderr,
          'a bad BALLPIT_OCL_NVREG is named (%r)' % p.stderr)

    cpu = os.path.join(tmp, 'cpu.csv')
    p = run([exe, '--headless', 'pile', '--frames', '10', '--dump', cpu])
    check(p.returncode == 0, 'cpu run exits 0')
    head_c, rows_c = read_dump(cpu)
    head_o, rows_o = read_dump(os.path.join(tmp, 'ocl0.csv'))
    check(head_c == head_o == ['id', 'x', 'y', 'vx', 'vy', 'r', 'm'], 'dump headers')
    check(len(rows_c) == len(rows_o) and len(rows_c) > 100, 'same ball count')
    dpos = max(max(abs(a[1] - b[1]), abs(a[2] - b[2])) for a, b in zip(rows_c, rows_o))
    dvel = max(max(abs(a[3] - b[3]), abs(a[4] - b[4])) for a, b in zip(rows_c, rows_o))
    check(dpos <= 2e-2 and dvel <= 0.5,
          'cpu and opencl dumps agree after 10 frames: %.3g px, %.3g px/s' % (dpos, dvel))

    p = run([exe, '--headless', 'gas', '--frames', '1', '--backend', 'opencl'],
            {'BALLPIT_OCL_FAIL': 'build'})
    err = last_lines(p.stderr)
    check(p.returncode == 3, 'injected build failure exits 3 (got %d)' % p.returncode)
    check('build log' in p.stderr and 'injected build failure' in p.stderr,
          'the build log is shown in full')
    check(len(err) >= 1 and 'clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE' in err[-1],
          'the last line says which call failed and why: %r' % (err[-1:] or ''))

    p = run([exe, '--headless', 'gas', '--frames', '5', '--backend', 'opencl', '--stats'],
            {'BALLPIT_OCL_FAIL': 'step:2'})
    err = last_lines(p.stderr)
    check(p.returncode == 3, 'injected step fault exits 3 (got %d)' % p.returncode)
    check(len(err) == 1 and 'CL_OUT_OF_RESOURCES' in err[0],
          'one line naming CL_OUT_OF_RESOURCES: %r' % p.stderr)
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
