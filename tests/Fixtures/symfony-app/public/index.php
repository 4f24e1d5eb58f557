<?php

// The front controller a web server hands to PHP-FPM (unused under Weft, which serves weft.php):
// code, never an asset, so --static public does not send it.
require __DIR__ . '/../vendor/autoload.php';
