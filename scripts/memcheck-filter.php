<?php

declare(strict_types=1);

/*
 * Reads a valgrind memcheck log (scripts/ext-memcheck.sh writes var/memcheck.log) and counts its
 * findings: error records that are not the noise of Fiber stack switching.
 *
 *   php scripts/memcheck-filter.php [--status=N] [--show=N] [--list] LOG
 *
 * --status  valgrind's exit code (99 = it counted errors); with 99 and no finding, a line says how many
 *           errors valgrind counted and that every one was judged Fiber noise, so a reader can check.
 * --show    how many findings to print in full on stderr (5).
 * --list    print every error record with its verdict (to review the classification by hand).
 * Prints "ext-memcheck: N finding(s) ..." on stdout; exits 1 when there is a finding, 0 otherwise, 2 on
 * bad usage or an unreadable log.
 *
 * Why records and not blocks between blank lines: valgrind does not put a blank line between its
 * "client switching stacks?" warning and the error that follows, so a block-based filter that dropped
 * whatever mentioned the warning dropped a real invalid write with it. Each error record is judged on
 * its own, from its header line ("Invalid write of size 8") to the next line that starts a record.
 *
 * Why text and not a valgrind suppressions file: a suppression matches the error's own stack, and most
 * stack-switch noise is reported at ordinary engine frames (execute_ex, zend_call_function, recv() under
 * weft_stream_read) whose only tie to the switch is the origin valgrind gives for the value ("created by
 * a stack allocation at jump_fcontext"). A suppression wide enough to catch those would hide real errors
 * at the same frames; the origin is the precise signal, and only the log has it.
 */

const WEFT_MEMCHECK_ERROR_HEADER = '/^(Invalid (read|write) of size \d+'
    . '|Invalid (free|delete|realloc)'
    . '|Mismatched (free|delete)'
    . '|Conditional jump or move depends on uninitialised value'
    . '|Use of uninitialised value'
    . '|Syscall param '
    . '|Source and destination overlap'
    . '|Jump to the invalid address'
    . '|Argument \'.*\' of function .* has a fishy'
    . '|.* has a fishy \(possibly negative\) value'
    . '|Invalid alignment value'
    . '|Unaddressable byte)/';

/**
 * Splits the log into error records: each is the header line and its indented continuation lines, with
 * the "==PID== " prefix taken off. Warnings, the banner and the summaries are not error records.
 *
 * @return list<list<string>>
 */
function weft_memcheck_records(string $log): array
{
    // Keyed by process: a process the tests fork (pcntl_fork) writes to the same log, and its lines
    // may fall between the parent's.
    $records = [];
    $current = [];
    foreach (preg_split('/\R/', $log) as $line) {
        if (!preg_match('/^==(\d+)== ?(.*)$/', $line, $m)) {
            continue;
        }
        [, $pid, $text] = $m;
        if ($text === '' || $text[0] !== ' ') {
            // An unindented line (or the blank separator) ends the record being read.
            if (isset($current[$pid])) {
                $records[] = $current[$pid];
                unset($current[$pid]);
            }
            if ($text !== '' && preg_match(WEFT_MEMCHECK_ERROR_HEADER, $text)) {
                $current[$pid] = [$text];
            }
            continue;
        }
        // An indented line continues an error record; after a warning or the summary, it is skipped.
        if (isset($current[$pid])) {
            $current[$pid][] = $text;
        }
    }
    foreach ($current as $record) {
        $records[] = $record;
    }
    return $records;
}

/** Whether a frame line is code of ours: a weft_*.c source line, a Weft method or function, weft.so. */
function weft_memcheck_is_weft_frame(string $line): bool
{
    return (bool) preg_match('/^\s+(at|by) 0x[0-9A-Fa-f]+: (zim_Weft|zif_weft|weft_)|\(weft_[a-z0-9_]*\.c:\d+\)|\(in \S*\/weft\.so\)/', $line);
}

/**
 * Whether the record's only cause is Debian's boost.context Fiber switch, whose stacks valgrind does not
 * know (the reason, in words, or null for a finding):
 * - an uninitialised value whose origin is "a stack allocation" at jump_fcontext: valgrind took the jump
 *   to another Fiber's stack for a stack allocation and marked what was there undefined, so the value
 *   was written, just not seen; this holds at any frame, ours included, and only for that origin;
 * - an invalid read or write of a "rw- anonymous segment" (a Fiber's mmap'd stack, which valgrind saw
 *   the stack pointer leave and so marked inaccessible) reported in the engine's own Fiber code (no
 *   frame of ours). A heap block is reported as "inside a block", never as an anonymous segment.
 */
function weft_memcheck_fiber_noise(array $record): ?string
{
    $body = implode("\n", $record);
    if (preg_match('/^Use of uninitialised|^Conditional jump|^Syscall param .*uninitialised/', $record[0])) {
        if (preg_match('/\n\s*Uninitialised value was created by a stack allocation\n\s+at 0x[0-9A-Fa-f]+: jump_fcontext /', $body)) {
            return 'value created by the stack allocation valgrind saw at jump_fcontext';
        }
        return null;
    }
    if (preg_match('/^Invalid (read|write) of size/', $record[0])) {
        if (!preg_match('/\n\s*Address 0x[0-9A-Fa-f]+ is in a rw- anonymous segment$/m', $body)) {
            return null;
        }
        foreach ($record as $line) {
            if (weft_memcheck_is_weft_frame($line)) {
                return null;
            }
        }
        return 'Fiber stack (rw- anonymous segment) read in engine code';
    }
    return null;
}

/**
 * valgrind's own count for the process it started (the first in the log): errors and contexts, from its
 * "ERROR SUMMARY". A forked child prints one too, but it repeats the parent's errors from before the
 * fork, so adding them up would count those twice.
 *
 * @return array{int, int}|null
 */
function weft_memcheck_summary(string $log): ?array
{
    if (!preg_match('/^==(\d+)==/m', $log, $first)) {
        return null;
    }
    if (!preg_match('/^==' . $first[1] . '== ERROR SUMMARY: ([\d,]+) errors? from ([\d,]+) contexts?/m', $log, $m)) {
        return null;
    }
    return [(int) str_replace(',', '', $m[1]), (int) str_replace(',', '', $m[2])];
}

function weft_memcheck_main(array $argv): int
{
    $status = null;
    $show = 5;
    $list = false;
    $path = null;
    foreach (array_slice($argv, 1) as $arg) {
        if (preg_match('/^--status=(\d+)$/', $arg, $m)) {
            $status = (int) $m[1];
        } elseif (preg_match('/^--show=(\d+)$/', $arg, $m)) {
            $show = (int) $m[1];
        } elseif ($arg === '--list') {
            $list = true;
        } elseif ($path === null && !str_starts_with($arg, '--')) {
            $path = $arg;
        } else {
            fwrite(STDERR, "memcheck-filter: unknown argument {$arg}\nusage: php scripts/memcheck-filter.php [--status=N] [--show=N] [--list] LOG\n");
            return 2;
        }
    }
    if ($path === null) {
        fwrite(STDERR, "usage: php scripts/memcheck-filter.php [--status=N] [--show=N] [--list] LOG\n");
        return 2;
    }
    $log = @file_get_contents($path);
    if ($log === false) {
        fwrite(STDERR, "memcheck-filter: cannot read {$path}\n");
        return 2;
    }

    $findings = 0;
    $noise = 0;
    foreach (weft_memcheck_records($log) as $record) {
        $why = weft_memcheck_fiber_noise($record);
        if ($list) {
            fwrite(STDERR, ($why === null ? 'FINDING' : "noise ({$why})") . ":\n  " . implode("\n  ", $record) . "\n\n");
        }
        if ($why !== null) {
            $noise++;
            continue;
        }
        $findings++;
        if (!$list && $findings <= $show) {
            fwrite(STDERR, implode("\n", $record) . "\n\n");
        }
    }

    $summary = weft_memcheck_summary($log);
    $counted = $summary === null ? 'no ERROR SUMMARY in the log' : "valgrind counted {$summary[0]} error(s) from {$summary[1]} context(s)";
    echo "ext-memcheck: {$findings} finding(s) outside Fiber stack switching; {$noise} error record(s) judged Fiber noise; {$counted}" . ($status === null ? '' : "; exit {$status}") . "\n";
    if (str_contains($log, "I'm not reporting any more")) {
        echo "ext-memcheck: valgrind stopped reporting errors at its limit (run it with --error-limit=no): errors after that are not in the log\n";
        return 1;
    }
    if ($findings === 0 && $status === 99) {
        echo "ext-memcheck: valgrind exited 99 because it counted " . ($summary === null ? 'errors' : "{$summary[0]} error(s) ({$summary[1]} context(s))")
            . " and all {$noise} reported record(s) were classified as Fiber stack-switch noise (check with: php scripts/memcheck-filter.php --list {$path})\n";
    }
    return $findings === 0 ? 0 : 1;
}

exit(weft_memcheck_main($argv));
