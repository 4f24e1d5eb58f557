<?php

// A configuration file (not an application: a framework's entry file is weft.php). Installed as
// /etc/weft/NAME.php, it configures the instance weft@NAME (deploy/weft@.service sets WEFT_CONFIG; or
// --config). Keys are the options of `bin/weft serve --help`; an unknown key is an error. WEFT_*
// variables and command-line flags override what is here; `bin/weft config --config
// /etc/weft/NAME.php` shows the result. Each instance needs its own `port` and `metrics` address.
// See docs/running-and-options.md, "Configuration".

return [
    'app' => '/srv/app/public/index.php',   // relative paths are relative to this file
    'host' => '127.0.0.1',                   // behind nginx (deploy/nginx/weft-lb.conf)
    'port' => 8081,
    // 'workers' => 4,                       // default: the CPUs this service may use (affinity, CPUQuota=)
    'max-requests' => 100000,
    'grace' => 10,
    'metrics' => '127.0.0.1:9100',           // /health and /metrics
    'log-format' => 'json',
    'log-level' => 'info',
    // HTTPS without nginx in front (docs/operating.md: HTTPS on one box); 'host' => '0.0.0.0', 'port' => 443:
    // 'tls-cert' => ['/etc/letsencrypt/live/example.org/fullchain.pem'],   // NAME=FILE entries for more names (SNI)
    // 'tls-key' => ['/etc/letsencrypt/live/example.org/privkey.pem'],
    // 'redirect-http' => '80',              // plain HTTP answered with a redirect to HTTPS
    // 'hsts' => 31536000,
];
