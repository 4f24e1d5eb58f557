/* Hand-written to match weft.stub.php, in the shape gen_stub.php produces for PHP 8.2. */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_version, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_Weft_Ext_parseHead, 0, 7, MAY_BE_ARRAY|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, buffer, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, offset, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, scanFrom, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxTargetBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderCount, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, methods, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_Weft_Ext_parseRequest, 0, 8, MAY_BE_OBJECT|MAY_BE_ARRAY|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, buffer, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, offset, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, scanFrom, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxTargetBytes, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, maxHeaderCount, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, methods, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, remoteAddress, IS_STRING, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_checkRequestLayout, 0, 1, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, class, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_encodeResponse, 0, 7, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, response, IS_OBJECT, 0)
	ZEND_ARG_TYPE_INFO(0, version, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, keepAlive, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, isHead, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, date, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, serverField, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, maxBody, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_Weft_Ext_encodeAnswer, 0, 8, MAY_BE_STRING|MAY_BE_FALSE|MAY_BE_NULL)
	ZEND_ARG_TYPE_INFO(0, response, IS_OBJECT, 0)
	ZEND_ARG_TYPE_INFO(0, request, IS_OBJECT, 0)
	ZEND_ARG_TYPE_INFO(0, mayKeepAlive, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, isHead, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, date, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, serverField, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, maxBody, IS_LONG, 0)
	ZEND_ARG_INFO(1, keepAlive)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_checkResponseLayout, 0, 1, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, class, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Weft_Ext_Epoll___construct, 0, 0, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Epoll_add, 0, 3, IS_VOID, 0)
	ZEND_ARG_INFO(0, stream)
	ZEND_ARG_TYPE_INFO(0, events, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Epoll_modify, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, events, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Epoll_remove, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Epoll_wait, 0, 0, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, timeout, IS_DOUBLE, 0, "-1")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, max, IS_LONG, 0, "1024")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Epoll_count, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Epoll_descriptorOf, 0, 1, IS_LONG, 1)
	ZEND_ARG_TYPE_INFO(0, stream, IS_MIXED, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_install, 0, 6, IS_VOID, 0)
	ZEND_ARG_OBJ_INFO(0, wait, Closure, 0)
	ZEND_ARG_OBJ_INFO(0, waitMany, Closure, 0)
	ZEND_ARG_OBJ_INFO(0, forget, Closure, 0)
	ZEND_ARG_OBJ_INFO(0, inCoroutine, Closure, 0)
	ZEND_ARG_OBJ_INFO(0, exited, Closure, 0)
	ZEND_ARG_OBJ_INFO(0, concurrentUse, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_uninstall, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_enable, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, kinds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_enabled, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_Hooks_available arginfo_class_Weft_Ext_Hooks_enabled

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_canSuspend, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, kind, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_waitFd, 0, 2, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, fd, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, events, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, timeout, IS_DOUBLE, 0, "-1")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_waitFds, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, fds, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, timeout, IS_DOUBLE, 0, "-1")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Hooks_idleLoop, 0, 1, IS_VOID, 0)
	ZEND_ARG_OBJ_INFO(0, loop, Weft\\Ext\\Loop, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Watchdog_start, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, threshold, IS_DOUBLE, 0)
	ZEND_ARG_OBJ_INFO(0, onBlocked, Closure, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_Watchdog_beat arginfo_class_Weft_Ext_Hooks_uninstall

#define arginfo_class_Weft_Ext_Watchdog_stop arginfo_class_Weft_Ext_Hooks_uninstall

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Watchdog_isRunning, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Deadline_configure, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, exceptionClass, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, message, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, exempt, IS_STRING, 0, "\"\"")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, tick, IS_DOUBLE, 0, "0.05")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Deadline_arm, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_Deadline_clear arginfo_class_Weft_Ext_Hooks_uninstall

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Deadline_count, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_Deadline_thrown arginfo_class_Weft_Ext_Deadline_count

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Deadline_track, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, fd, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, lastWords, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Deadline_lastWordsOn, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, signal, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Deadline_claimLastWords, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_FUNCTION(weft_version);
ZEND_FUNCTION(weft_parse_head);
ZEND_FUNCTION(weft_parse_request);
ZEND_FUNCTION(weft_check_request_layout);
ZEND_FUNCTION(weft_encode_response);
ZEND_FUNCTION(weft_encode_answer);
ZEND_FUNCTION(weft_check_response_layout);
ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Weft_Ext_OutputStack_detach, 0, 1, Weft\\Ext\\OutputStack, 1)
	ZEND_ARG_TYPE_INFO(0, base, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_OutputStack_attach arginfo_class_Weft_Ext_Hooks_uninstall

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_OutputStack_count, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Weft_Ext_StaticProperties___construct, 0, 0, 1)
	ZEND_ARG_TYPE_INFO(0, classes, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_StaticProperties_read, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(1, values, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_StaticProperties_write, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, values, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_StaticProperties_count arginfo_class_Weft_Ext_OutputStack_count

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_StaticProperties_snapshot, 0, 0, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, previous, IS_ARRAY, 1, "null")
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_StaticProperties_restore arginfo_class_Weft_Ext_StaticProperties_write

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_StaticProperties_keys, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_Inotify___construct arginfo_class_Weft_Ext_Epoll___construct

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Inotify_fd, 0, 0, IS_LONG, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Inotify_add, 0, 2, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, path, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, mask, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Inotify_remove, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, wd, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Weft_Ext_Inotify_read, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Weft_Ext_Inotify_close arginfo_class_Weft_Ext_Hooks_uninstall

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_tlsTicketKeys, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, keys, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_tlsShareTickets, 0, 3, IS_LONG, 0)
	ZEND_ARG_INFO(0, stream)
	ZEND_ARG_TYPE_INFO(0, method, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, lifetime, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_tlsSessionReused, 0, 1, _IS_BOOL, 1)
	ZEND_ARG_INFO(0, stream)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_tlsContext, 0, 4, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, certificates, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, ciphers, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, alpn, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, lifetime, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_tlsAttach, 0, 1, IS_LONG, 0)
	ZEND_ARG_INFO(0, stream)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Weft_Ext_tlsUnread, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, streams, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_Weft_Ext_tlsRead, 0, 2, MAY_BE_STRING|MAY_BE_FALSE|MAY_BE_NULL)
	ZEND_ARG_INFO(0, stream)
	ZEND_ARG_TYPE_INFO(0, length, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_Weft_Ext_tlsWrite, 0, 2, MAY_BE_LONG|MAY_BE_FALSE|MAY_BE_NULL)
	ZEND_ARG_INFO(0, stream)
	ZEND_ARG_TYPE_INFO(0, data, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, offset, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, length, IS_LONG, 1, "null")
ZEND_END_ARG_INFO()

ZEND_FUNCTION(weft_tls_context);
ZEND_FUNCTION(weft_tls_attach);
ZEND_FUNCTION(weft_tls_unread);
ZEND_FUNCTION(weft_tls_read);
ZEND_FUNCTION(weft_tls_write);
ZEND_FUNCTION(weft_tls_session_reused);
ZEND_FUNCTION(weft_tls_ticket_keys);
ZEND_FUNCTION(weft_tls_share_tickets);
ZEND_METHOD(Weft_Ext_Epoll, __construct);
ZEND_METHOD(Weft_Ext_Epoll, add);
ZEND_METHOD(Weft_Ext_Epoll, modify);
ZEND_METHOD(Weft_Ext_Epoll, remove);
ZEND_METHOD(Weft_Ext_Epoll, wait);
ZEND_METHOD(Weft_Ext_Epoll, count);
ZEND_METHOD(Weft_Ext_Epoll, descriptorOf);
ZEND_METHOD(Weft_Ext_Hooks, install);
ZEND_METHOD(Weft_Ext_Hooks, uninstall);
ZEND_METHOD(Weft_Ext_Hooks, enable);
ZEND_METHOD(Weft_Ext_Hooks, enabled);
ZEND_METHOD(Weft_Ext_Hooks, available);
ZEND_METHOD(Weft_Ext_Hooks, canSuspend);
ZEND_METHOD(Weft_Ext_Hooks, waitFd);
ZEND_METHOD(Weft_Ext_Hooks, waitFds);
ZEND_METHOD(Weft_Ext_Hooks, idleLoop);
ZEND_METHOD(Weft_Ext_Watchdog, start);
ZEND_METHOD(Weft_Ext_Watchdog, beat);
ZEND_METHOD(Weft_Ext_Watchdog, stop);
ZEND_METHOD(Weft_Ext_Watchdog, isRunning);
ZEND_METHOD(Weft_Ext_Deadline, configure);
ZEND_METHOD(Weft_Ext_Deadline, arm);
ZEND_METHOD(Weft_Ext_Deadline, clear);
ZEND_METHOD(Weft_Ext_Deadline, count);
ZEND_METHOD(Weft_Ext_Deadline, thrown);
ZEND_METHOD(Weft_Ext_Deadline, track);
ZEND_METHOD(Weft_Ext_Deadline, lastWordsOn);
ZEND_METHOD(Weft_Ext_Deadline, claimLastWords);
ZEND_METHOD(Weft_Ext_OutputStack, detach);
ZEND_METHOD(Weft_Ext_OutputStack, attach);
ZEND_METHOD(Weft_Ext_OutputStack, count);
ZEND_METHOD(Weft_Ext_StaticProperties, __construct);
ZEND_METHOD(Weft_Ext_StaticProperties, read);
ZEND_METHOD(Weft_Ext_StaticProperties, write);
ZEND_METHOD(Weft_Ext_StaticProperties, count);
ZEND_METHOD(Weft_Ext_StaticProperties, snapshot);
ZEND_METHOD(Weft_Ext_StaticProperties, restore);
ZEND_METHOD(Weft_Ext_StaticProperties, keys);
ZEND_METHOD(Weft_Ext_Inotify, __construct);
ZEND_METHOD(Weft_Ext_Inotify, fd);
ZEND_METHOD(Weft_Ext_Inotify, add);
ZEND_METHOD(Weft_Ext_Inotify, remove);
ZEND_METHOD(Weft_Ext_Inotify, read);
ZEND_METHOD(Weft_Ext_Inotify, close);

static const zend_function_entry ext_functions[] = {
	ZEND_NS_NAMED_FE("Weft\\Ext", version, ZEND_FN(weft_version), arginfo_Weft_Ext_version)
	ZEND_NS_NAMED_FE("Weft\\Ext", parseHead, ZEND_FN(weft_parse_head), arginfo_Weft_Ext_parseHead)
	ZEND_NS_NAMED_FE("Weft\\Ext", parseRequest, ZEND_FN(weft_parse_request), arginfo_Weft_Ext_parseRequest)
	ZEND_NS_NAMED_FE("Weft\\Ext", checkRequestLayout, ZEND_FN(weft_check_request_layout), arginfo_Weft_Ext_checkRequestLayout)
	ZEND_NS_NAMED_FE("Weft\\Ext", encodeResponse, ZEND_FN(weft_encode_response), arginfo_Weft_Ext_encodeResponse)
	ZEND_NS_NAMED_FE("Weft\\Ext", encodeAnswer, ZEND_FN(weft_encode_answer), arginfo_Weft_Ext_encodeAnswer)
	ZEND_NS_NAMED_FE("Weft\\Ext", checkResponseLayout, ZEND_FN(weft_check_response_layout), arginfo_Weft_Ext_checkResponseLayout)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsTicketKeys, ZEND_FN(weft_tls_ticket_keys), arginfo_Weft_Ext_tlsTicketKeys)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsShareTickets, ZEND_FN(weft_tls_share_tickets), arginfo_Weft_Ext_tlsShareTickets)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsSessionReused, ZEND_FN(weft_tls_session_reused), arginfo_Weft_Ext_tlsSessionReused)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsContext, ZEND_FN(weft_tls_context), arginfo_Weft_Ext_tlsContext)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsAttach, ZEND_FN(weft_tls_attach), arginfo_Weft_Ext_tlsAttach)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsUnread, ZEND_FN(weft_tls_unread), arginfo_Weft_Ext_tlsUnread)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsRead, ZEND_FN(weft_tls_read), arginfo_Weft_Ext_tlsRead)
	ZEND_NS_NAMED_FE("Weft\\Ext", tlsWrite, ZEND_FN(weft_tls_write), arginfo_Weft_Ext_tlsWrite)
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_Epoll_methods[] = {
	ZEND_ME(Weft_Ext_Epoll, __construct, arginfo_class_Weft_Ext_Epoll___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Epoll, add, arginfo_class_Weft_Ext_Epoll_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Epoll, modify, arginfo_class_Weft_Ext_Epoll_modify, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Epoll, remove, arginfo_class_Weft_Ext_Epoll_remove, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Epoll, wait, arginfo_class_Weft_Ext_Epoll_wait, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Epoll, count, arginfo_class_Weft_Ext_Epoll_count, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Epoll, descriptorOf, arginfo_class_Weft_Ext_Epoll_descriptorOf, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_EpollException_methods[] = {
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_Hooks_methods[] = {
	ZEND_ME(Weft_Ext_Hooks, install, arginfo_class_Weft_Ext_Hooks_install, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, uninstall, arginfo_class_Weft_Ext_Hooks_uninstall, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, enable, arginfo_class_Weft_Ext_Hooks_enable, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, enabled, arginfo_class_Weft_Ext_Hooks_enabled, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, available, arginfo_class_Weft_Ext_Hooks_available, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, canSuspend, arginfo_class_Weft_Ext_Hooks_canSuspend, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, waitFd, arginfo_class_Weft_Ext_Hooks_waitFd, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, waitFds, arginfo_class_Weft_Ext_Hooks_waitFds, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Hooks, idleLoop, arginfo_class_Weft_Ext_Hooks_idleLoop, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_Watchdog_methods[] = {
	ZEND_ME(Weft_Ext_Watchdog, start, arginfo_class_Weft_Ext_Watchdog_start, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Watchdog, beat, arginfo_class_Weft_Ext_Watchdog_beat, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Watchdog, stop, arginfo_class_Weft_Ext_Watchdog_stop, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Watchdog, isRunning, arginfo_class_Weft_Ext_Watchdog_isRunning, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_Deadline_methods[] = {
	ZEND_ME(Weft_Ext_Deadline, configure, arginfo_class_Weft_Ext_Deadline_configure, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Deadline, arm, arginfo_class_Weft_Ext_Deadline_arm, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Deadline, clear, arginfo_class_Weft_Ext_Deadline_clear, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Deadline, count, arginfo_class_Weft_Ext_Deadline_count, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Deadline, thrown, arginfo_class_Weft_Ext_Deadline_thrown, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Deadline, track, arginfo_class_Weft_Ext_Deadline_track, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Deadline, lastWordsOn, arginfo_class_Weft_Ext_Deadline_lastWordsOn, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_Deadline, claimLastWords, arginfo_class_Weft_Ext_Deadline_claimLastWords, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_StaticProperties_methods[] = {
	ZEND_ME(Weft_Ext_StaticProperties, __construct, arginfo_class_Weft_Ext_StaticProperties___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_StaticProperties, read, arginfo_class_Weft_Ext_StaticProperties_read, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_StaticProperties, write, arginfo_class_Weft_Ext_StaticProperties_write, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_StaticProperties, count, arginfo_class_Weft_Ext_StaticProperties_count, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_StaticProperties, snapshot, arginfo_class_Weft_Ext_StaticProperties_snapshot, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_StaticProperties, restore, arginfo_class_Weft_Ext_StaticProperties_restore, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_StaticProperties, keys, arginfo_class_Weft_Ext_StaticProperties_keys, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_OutputStack_methods[] = {
	ZEND_ME(Weft_Ext_OutputStack, detach, arginfo_class_Weft_Ext_OutputStack_detach, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Weft_Ext_OutputStack, attach, arginfo_class_Weft_Ext_OutputStack_attach, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_OutputStack, count, arginfo_class_Weft_Ext_OutputStack_count, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Weft_Ext_Inotify_methods[] = {
	ZEND_ME(Weft_Ext_Inotify, __construct, arginfo_class_Weft_Ext_Inotify___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Inotify, fd, arginfo_class_Weft_Ext_Inotify_fd, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Inotify, add, arginfo_class_Weft_Ext_Inotify_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Inotify, remove, arginfo_class_Weft_Ext_Inotify_remove, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Inotify, read, arginfo_class_Weft_Ext_Inotify_read, ZEND_ACC_PUBLIC)
	ZEND_ME(Weft_Ext_Inotify, close, arginfo_class_Weft_Ext_Inotify_close, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};

static const zend_function_entry class_Weft_Ext_InotifyException_methods[] = {
	ZEND_FE_END
};
