<?php

// The concurrency probe's entry file (tests/Integration/Bridge/ConcurrentLaravelTest): weft.php, and
// when PROBE_UNFOLLOW names a followed value, that value stops following the coroutine, to show that
// the test notices.
declare(strict_types=1);

use Weft\Bridge\Laravel\LaravelHandler;
use Weft\Coroutine\ProcessState;

require __DIR__ . '/vendor/autoload.php';

$handler = LaravelHandler::fromBasePath(__DIR__);
$unfollow = getenv('PROBE_UNFOLLOW');
if (is_string($unfollow) && $unfollow !== '') {
    if (!ProcessState::isFollowed($unfollow)) {
        throw new RuntimeException("PROBE_UNFOLLOW: '$unfollow' is not followed");
    }
    ProcessState::forget($unfollow);
}
return $handler;
