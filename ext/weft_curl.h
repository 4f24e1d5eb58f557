/*
 * The curl hook (weft_curl.c): curl_exec() and curl_multi_select() suspend the current coroutine instead of
 * blocking the worker.
 */
#ifndef WEFT_CURL_H
#define WEFT_CURL_H

#include "php.h"

/*
 * Installs the hook when the curl extension is loaded and the start-up check passes; otherwise leaves
 * curl exactly as it is. Never fails the module: the outcome is in the constant Weft\Ext\CURL_HOOK
 * ("active", or "unavailable: <why>").
 */
void weft_curl_minit(int module_number);

#endif
