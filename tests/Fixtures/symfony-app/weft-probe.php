<?php

// The concurrency probe's entry file (tests/Integration/Bridge/ConcurrentSymfonyTest): weft.php, and
// when PROBE_UNFOLLOW names a followed value, that value stops following the coroutine, to show that
// the test notices.
declare(strict_types=1);

use Weft\Coroutine\ProcessState;

$handler = require __DIR__ . '/weft.php';
$unfollow = getenv('PROBE_UNFOLLOW');
if (is_string($unfollow) && $unfollow !== '') {
    if (!ProcessState::isFollowed($unfollow)) {
        throw new RuntimeException("PROBE_UNFOLLOW: '$unfollow' is not followed");
    }
    ProcessState::forget($unfollow);
}
return $handler;
