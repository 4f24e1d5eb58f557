<?php

use App\Counter;
use App\Registry;
use Illuminate\Http\Request;
use Illuminate\Support\Facades\Auth;
use Illuminate\Support\Facades\Route;

Route::get('/', fn () => response('Hello World', 200, ['Content-Type' => 'text/plain']));

Route::get('/json', fn (Request $request) => response()->json(['framework' => 'laravel', 'query' => $request->query()]));

Route::post('/echo', fn (Request $request) => response()->json([
    'length' => strlen($request->getContent()),
    'sha1' => sha1($request->getContent()),
    'data' => $request->except(array_keys($request->allFiles())),
    'files' => array_map(
        static fn ($file) => ['name' => $file->getClientOriginalName(), 'size' => $file->getSize(), 'valid' => $file->isValid(), 'sha1' => sha1_file($file->getPathname()), 'path' => $file->getPathname()],
        $request->allFiles(),
    ),
]));

// An upload kept: stored on the local disk, as an application stores one.
Route::post('/upload', function (Request $request) {
    $file = $request->file('doc');
    $temporary = $file->getPathname();
    $valid = $file->isValid();
    $stored = $file->storeAs('uploads', bin2hex(random_bytes(6)) . '-' . $file->getClientOriginalName(), 'local');
    $kept = Illuminate\Support\Facades\Storage::disk('local')->path($stored);
    return response()->json(['valid' => $valid, 'temporary' => $temporary, 'kept' => $kept, 'sha1' => sha1_file($kept)]);
})->withoutMiddleware([\Illuminate\Foundation\Http\Middleware\ValidateCsrfToken::class]);

Route::get('/headers', function (Request $request) {
    return response()->json([
        'agent' => $request->header('X-Agent'),
        'cookie' => $request->cookie('flavour'),
        'host' => $request->getHost(),
        'client_ip' => $request->ip(),
        'secure' => $request->secure(),
        'forwarded_for' => $request->header('X-Forwarded-For'),
        'method' => $request->method(),
    ])->header('X-Answer', '42')->cookie('visited', 'yes', 0, '/', null, false, true, false, 'lax');
})->withoutMiddleware([\Illuminate\Cookie\Middleware\EncryptCookies::class]);

Route::get('/counter', function (Counter $counter) {
    $counter->increment();
    return response()->json(['count' => $counter->increment()]);
});

Route::get('/leak', function (Request $request, Registry $registry) {
    $registry->seen[] = (string) $request->query('id');
    Registry::$log[] = (string) $request->query('id');
    return response()->json(['seen' => $registry->seen]);
});

// A static written by concurrent requests, each then waiting on the database: a race between users.
Route::get('/race', function (Request $request) {
    Registry::$log = [(string) $request->query('id')];
    Illuminate\Support\Facades\DB::select('select sleep(0.1)');
    return response()->json(['last' => Registry::$log[0]]);
});

// Per-request state the bridge must reset: config written at run time, the authenticated user
// and the request the url() helper sees.
Route::get('/state', function (Request $request) {
    $before = ['config' => config('app.marker'), 'user' => Auth::id()];
    config(['app.marker' => $request->query('marker')]);
    if ($request->query('login') !== null) {
        Auth::setUser(new \Illuminate\Auth\GenericUser(['id' => (int) $request->query('login')]));
    }
    return response()->json($before + ['url' => url()->current()]);
});

// What code that reads the superglobals sees (PHP-FPM's values for this request), and a write into
// them that the next request must not see.
Route::match(['GET', 'POST', 'PUT'], '/globals', function () {
    $seen = [
        'get' => $_GET, 'post' => $_POST, 'cookie' => $_COOKIE, 'request' => $_REQUEST,
        'files' => array_map(static fn (array $file) => ['name' => $file['name'], 'size' => $file['size'], 'error' => $file['error'], 'exists' => is_file($file['tmp_name'])], $_FILES),
        'uri' => $_SERVER['REQUEST_URI'] ?? null, 'method' => $_SERVER['REQUEST_METHOD'] ?? null, 'leaked' => $_SERVER['HTTP_X_LEAKED'] ?? null,
        'timezone' => date_default_timezone_get(), 'numeric' => setlocale(LC_NUMERIC, '0'), 'intl' => class_exists(\Locale::class) ? \Locale::getDefault() : null,
    ];
    $_GET['leaked'] = $_POST['leaked'] = $_COOKIE['leaked'] = $_REQUEST['leaked'] = $_SERVER['HTTP_X_LEAKED'] = 'yes';
    // A user's timezone and number format, set for this request only.
    date_default_timezone_set('Asia/Tokyo');
    setlocale(LC_NUMERIC, 'C.UTF-8', 'C.utf8');
    if (class_exists(\Locale::class)) {
        \Locale::setDefault('fr_FR');
    }
    return response()->json($seen);
})->withoutMiddleware([\Illuminate\Foundation\Http\Middleware\ValidateCsrfToken::class]);

// State of the services boot built, which a request changes through ordinary calls and the next
// request must find as boot left it: the locale, data shared with every view, the log's shared
// context, the array cache; and whether Laravel believes it runs in a console.
Route::get('/shared', function (Request $request) {
    $before = [
        'locale' => app()->getLocale(),
        'translator' => app('translator')->getLocale(),
        'view' => view()->shared('visitor'),
        'log' => Illuminate\Support\Facades\Log::sharedContext(),
        'cache' => Illuminate\Support\Facades\Cache::store('array')->get('visitor'),
        'console' => app()->runningInConsole(),
    ];
    $visitor = (string) $request->query('visitor');
    app()->setLocale('fr');
    Illuminate\Support\Facades\View::share('visitor', $visitor);
    Illuminate\Support\Facades\Log::shareContext(['visitor' => $visitor]);
    Illuminate\Support\Facades\Cache::store('array')->put('visitor', $visitor);
    return response()->json($before);
});

// The session (the tests run it with SESSION_DRIVER=file): each client its own.
Route::get('/session', function (Request $request) {
    $before = session('visitor');
    if ($request->query('visitor') !== null) {
        session(['visitor' => (string) $request->query('visitor')]);
    }
    return response()->json(['id' => session()->getId(), 'before' => $before]);
});

// The paginator reads the page and the URL from the request being served.
Route::get('/paginate', function () {
    $items = new Illuminate\Pagination\LengthAwarePaginator(range(1, 10), 100, 10, Illuminate\Pagination\Paginator::resolveCurrentPage(), [
        'path' => Illuminate\Pagination\Paginator::resolveCurrentPath(),
        'query' => Illuminate\Pagination\Paginator::resolveQueryString(),
    ]);
    return response()->json(['page' => $items->currentPage(), 'next' => $items->nextPageUrl()]);
});

// The guard and the ability the application configured in boot().
Route::get('/token', function () {
    Auth::shouldUse('token');
    return response()->json(['user' => Auth::id(), 'can' => Illuminate\Support\Facades\Gate::allows('see-dashboard')]);
});

Route::get('/once', fn () => response()->json(['visitor' => App\CurrentVisitor::name()]));

Route::get('/scoped', function () {
    $first = app(App\RequestScoped::class);
    $first->hits++;
    return response()->json(['same' => $first === app(App\RequestScoped::class), 'hits' => app(App\RequestScoped::class)->hits]);
});

// A terminating callback runs after its own request, once: it is registered on that request's sandbox.
Route::get('/terminate-probe', function (Request $request) {
    app()->terminating(static function () use ($request): void {
        file_put_contents(storage_path('app/terminated.txt'), $request->query('id') . "\n", FILE_APPEND);
    });
    return response('registered', 200, ['Content-Type' => 'text/plain']);
});

// Work after the response: waits (5 s at most) for the client to create storage/app/flag-X, which it
// can only do once it has the response, and records whether it saw it.
Route::get('/after-response', function (Request $request) {
    $id = preg_replace('/[^a-z0-9]/', '', (string) $request->query('id'));
    app()->terminating(static function () use ($id): void {
        $flag = storage_path("app/flag-$id");
        $deadline = microtime(true) + 5.0;
        while (!is_file($flag) && microtime(true) < $deadline) {
            usleep(10_000);
        }
        file_put_contents(storage_path("app/after-$id.txt"), is_file($flag) ? 'saw the flag' : 'timed out');
    });
    return response('Hello World', 200, ['Content-Type' => 'text/plain']);
});

Route::match(['GET', 'HEAD'], '/terminate-fails', function () {
    app()->terminating(static function (): void {
        throw new RuntimeException('the terminate listener failed on purpose');
    });
    return response('Hello World', 200, ['Content-Type' => 'text/plain']);
});

Route::get('/terminated', fn () => response((string) @file_get_contents(storage_path('app/terminated.txt')), 200, ['Content-Type' => 'text/plain']));

// 32 MB, more than the kernel's socket buffers hold: a client that leaves leaves mid-body.
Route::get('/big', fn () => response()->stream(function () {
    $chunk = str_repeat('x', 65536);
    for ($i = 0; $i < 512; $i++) {
        echo $chunk;
    }
}, 200, ['Content-Type' => 'application/octet-stream']));

// dump() while debugging: the dump belongs in the page, as under PHP-FPM.
Route::get('/dump', function () {
    dump(['dumped' => 'value']);
    return response('returned', 200, ['Content-Type' => 'text/html']);
});

Route::get('/echoed', function () {
    echo 'echoed ';
    return response('returned', 200, ['Content-Type' => 'text/plain']);
});

// The database (the tests point DB_URL at the test MariaDB): one connection for the worker's life.
Route::get('/db', fn () => response()->json([
    'connection' => (int) Illuminate\Support\Facades\DB::selectOne('select connection_id() as id')->id,
    'transaction_level' => Illuminate\Support\Facades\DB::transactionLevel(),
]));

// A query that takes a while: with the hooks on it suspends the request's coroutine meanwhile.
Route::get('/db-slow', fn (Request $request) => response()->json(
    Illuminate\Support\Facades\DB::selectOne('select sleep(0.2) as slept, ? as v, connection_id() as connection', [(string) $request->query('v')])
));

Route::get('/db-fail', function () {
    Illuminate\Support\Facades\DB::beginTransaction();
    throw new RuntimeException('failed inside a transaction');
});

// exit() and dd() end the request as under PHP-FPM: what was printed so far is the answer.
Route::get('/exit', function () {
    echo "printed before exit\n";
    exit;
    return response('not reached');
});

Route::get('/dd', function () {
    dd(['fixture' => 'dumped and died']);
});

Route::get('/dd-collection', function () {
    collect(['fixture' => 'a collection dumped and died'])->dd();
});

// A blocking call (with the sleep hook off): what the blocking-call detector is for.
Route::get('/blocks', function () {
    usleep(120_000);
    return response('Hello World', 200, ['Content-Type' => 'text/plain']);
});

// A route that usually works and fails now and then: its first error renders the error page.
Route::get('/sometimes-fails', function (Request $request) {
    if ($request->boolean('fail')) {
        throw new RuntimeException('the fixture failed this time');
    }
    return response('Hello World', 200, ['Content-Type' => 'text/plain']);
});

// An error page that takes 60 ms to render, then 30 ms more in a middleware on the response's way out:
// the blocking-call detector never reports the page, and counts the time after it apart.
Route::get('/slow-error-page', function () {
    throw new class ('slow to render') extends RuntimeException {
        public function render(): Illuminate\Http\Response
        {
            usleep(60_000);
            return response('a slow error page', 500);
        }
    };
})->middleware(App\SlowOnTheWayOut::class);

Route::get('/fail', function () {
    throw new RuntimeException('the fixture failed on purpose');
});

Route::get('/stream', fn () => response()->stream(function () {
    for ($i = 0; $i < 5; $i++) {
        echo "line $i\n";
        flush();
    }
}, 200, ['Content-Type' => 'text/plain']));

// A file made for this request and deleted once sent: a generated export.
Route::match(['GET', 'HEAD'], '/export', function (Request $request) {
    $path = sys_get_temp_dir() . '/weft-export-' . preg_replace('/[^a-z0-9]/', '', (string) $request->query('id')) . '.csv';
    file_put_contents($path, str_repeat("a,b,c\n", 1000));
    return response()->download($path, 'export.csv', ['Content-Type' => 'text/csv'])->deleteFileAfterSend();
});

Route::get('/file', function () {
    $path = storage_path('app/data.bin');
    if (!is_file($path)) {
        @mkdir(dirname($path), 0777, true);
        file_put_contents($path, str_repeat(implode('', array_map('chr', range(0, 255))), 1171) . str_repeat('w', 300000 - 256 * 1171));
    }
    return response()->download($path, 'data.bin', ['Content-Type' => 'application/octet-stream']);
});

// The concurrency probe: the request writes its own id into every place a request's state lives
// (container, facades, config, locale, session, auth, cookies, log context, view data, Eloquent,
// once(), Number, Carbon, the superglobals, timezone and C and intl locales), waits on the
// database (other requests run meanwhile in the same worker), then reads each back.
Route::match(['GET', 'POST'], '/identity', function (Request $request) {
    $id = (string) $request->input('id');
    $odd = ((int) $id) % 2 === 1;
    app()->instance('probe.id', $id);
    config(['app.probe' => $id]);
    Illuminate\Support\Facades\App::setLocale("l$id");
    session(['probe' => $id]);
    Auth::setUser(new \Illuminate\Auth\GenericUser(['id' => (int) $id]));
    Illuminate\Support\Facades\Cookie::queue('probe', $id);
    Illuminate\Support\Facades\Log::shareContext(['probe' => $id]);
    Illuminate\Support\Facades\View::share('probe', $id);
    App\ProbeModel::addGlobalScope('probe', new App\ProbeScope($id));
    Illuminate\Support\Number::useLocale("n$id");
    Illuminate\Support\Number::useCurrency("C$id");
    Carbon\Carbon::setLocale($odd ? 'fr' : 'de');
    date_default_timezone_set($odd ? 'Asia/Tokyo' : 'America/Lima');
    setlocale(LC_NUMERIC, $odd ? 'C.UTF-8' : 'C');
    \Locale::setDefault("i$id");
    $_SERVER['PROBE'] = $id;
    $visitor = App\CurrentVisitor::name();
    // What a component renders with (Component::factory(), which caches it in a static).
    $component = static fn () => (static fn () => static::$factory ??= Illuminate\Container\Container::getInstance()->make('view'))
        ->bindTo(null, Illuminate\View\Component::class)();
    $component();
    // Model events must reach this instance's dispatcher: a listener on each dispatcher (added once)
    // notes which dispatcher a retrieved model went to, in the request that is current.
    static $listening = [];
    $events = app('events');
    if (!isset($listening[spl_object_id($events)])) {
        $listening[spl_object_id($events)] = true;
        $events->listen('eloquent.retrieved: ' . App\ProbeModel::class, static function () use ($events): void {
            app('probe.events')->from[] = spl_object_id($events);
        });
    }
    app()->instance('probe.events', $modelEvents = new stdClass());
    $modelEvents->from = [];

    // Rendering into an output buffer across the wait, as a view that queries mid-render does.
    ob_start();
    echo "<$id>";
    $db = Illuminate\Support\Facades\DB::selectOne('select connection_id() as connection, sleep(?) as slept', [(float) $request->input('wait', 0.2)]);
    echo "</$id>";
    $buffer = ob_get_clean();

    $model = App\ProbeModel::fromSub(Illuminate\Support\Facades\DB::query()->selectRaw('1 as id'), 'probe_models')->first();
    return response()->json([
        'id' => $id,
        'buffer' => $buffer,
        'connection' => (int) $db->connection,
        'container' => app('probe.id'),
        'facade' => Illuminate\Support\Facades\Request::input('id'),
        'request' => request()->input('id'),
        'config' => config('app.probe'),
        'locale' => app()->getLocale(),
        'session' => session('probe'),
        'user' => (string) Auth::id(),
        'cookie' => Illuminate\Support\Facades\Cookie::queued('probe')?->getValue(),
        'log' => Illuminate\Support\Facades\Log::sharedContext()['probe'] ?? null,
        'view' => Illuminate\Support\Facades\View::shared('probe'),
        'component' => $component()->shared('probe'),
        'model_connection' => (int) App\ProbeModel::resolveConnection()->selectOne('select connection_id() as c')->c,
        'model_events' => $modelEvents->from === [spl_object_id(app('events'))] ? 1 : $modelEvents->from,
        'model_booted' => $model?->getAttribute('seen_by_booted_listener') === true,
        'scope' => App\ProbeModel::getGlobalScope('probe')?->id,
        'once' => App\CurrentVisitor::name() === $visitor ? $visitor : 'changed to ' . App\CurrentVisitor::name(),
        'number' => Illuminate\Support\Number::defaultLocale() . '/' . Illuminate\Support\Number::defaultCurrency(),
        'carbon' => Carbon\Carbon::getLocale(),
        'timezone' => date_default_timezone_get(),
        'numeric' => setlocale(LC_NUMERIC, '0'),
        'intl' => \Locale::getDefault(),
        'get' => $_GET['id'] ?? null,
        'post' => $_POST['id'] ?? null,
        'request_global' => $_REQUEST['id'] ?? null,
        'cookie_global' => $_COOKIE['client'] ?? null,
        'files' => $_FILES['doc']['name'] ?? null,
        'server' => $_SERVER['PROBE'] ?? null,
        'query_string' => $_SERVER['QUERY_STRING'] ?? null,
    ]);
})->withoutMiddleware([\Illuminate\Foundation\Http\Middleware\ValidateCsrfToken::class, \Illuminate\Cookie\Middleware\EncryptCookies::class]);

// Who the session says this client is, read after a short wait on the database so that requests of
// other clients run in between: ?as=NAME logs the client in (the session holds the name).
Route::get('/who', function (Request $request) {
    if ($request->query('as') !== null) {
        session()->regenerate();
        session(['user' => (string) $request->query('as')]);
    }
    Illuminate\Support\Facades\DB::select('select sleep(?)', [random_int(0, 10) / 1000]);
    return response()->json(['user' => session('user'), 'session' => session()->getId()]);
});

// `bin/weft bench framework`: a route that waits 50 ms on MariaDB, and the classic three-query
// endpoint (two point selects and a range, the `test` table the scenario seeds).
Route::get('/sleep', function () {
    Illuminate\Support\Facades\DB::select('SELECT SLEEP(0.05)');
    return response('ok', 200, ['Content-Type' => 'text/plain']);
});

Route::get('/sql3', fn () => response()->json([
    'a' => Illuminate\Support\Facades\DB::selectOne('SELECT * FROM test WHERE id = ?', [1]),
    'b' => Illuminate\Support\Facades\DB::selectOne('SELECT * FROM test WHERE id = ?', [2]),
    'rows' => Illuminate\Support\Facades\DB::select('SELECT * FROM test LIMIT 5'),
]));

// Queries of 100 ms each, ?times=N of them (the slow-request handler of AppServiceProvider fires past
// 150 ms in one request), and a query that carries a marker the debug error page would list.
Route::get('/queries', function (Request $request) {
    foreach (range(1, (int) $request->query('times', 1)) as $_) {
        Illuminate\Support\Facades\DB::select('select sleep(0.1), ? as marker', [(string) $request->query('marker', '')]);
    }
    return response('ok', 200, ['Content-Type' => 'text/plain']);
});

Route::get('/slow-requests', fn () => response((string) @file_get_contents(storage_path('app/slow-requests.txt')), 200, ['Content-Type' => 'text/plain']));

// A fatal error (memory exhausted), which ends the worker.
Route::get('/fatal', function () {
    $chunks = [];
    while (true) {
        $chunks[] = str_repeat('x', 1 << 20);
    }
});

// A streamed body that waits on the database while it is produced, then reads its request's state.
Route::get('/stream-identity', function (Request $request) {
    $id = (string) $request->query('id');
    app()->instance('probe.id', $id);
    config(['app.probe' => $id]);
    return response()->stream(function (): void {
        echo 'before ', app('probe.id'), "\n";
        flush();
        Illuminate\Support\Facades\DB::select('select sleep(0.1)');
        echo 'after ', app('probe.id'), ' ', config('app.probe'), ' ', request()->query('id'), "\n";
    }, 200, ['Content-Type' => 'text/plain']);
});
