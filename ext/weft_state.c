/*
 * Weft\Ext\StaticProperties: reads and writes many static properties of user classes in one call, for
 * the values that follow the coroutine (Weft\Coroutine\ProcessState, StateSet).
 *
 * A Laravel worker switches some thirty static properties at every switch between two requests of
 * different framework instances, several times a request. Done in PHP, that is a closure call per
 * declaring class and a fetch by name per property (about 1,700 instructions a property and switch).
 * Here the classes and properties are resolved once, when the object is made (ProcessState makes one
 * whenever the set of followed values changes), and a switch is a copy per property: a class is never
 * unloaded while PHP runs, and neither its static members table nor a property's offset in it moves.
 * Only public engine API is used (the class table, a class's properties_info, CE_STATIC_MEMBERS and
 * zend_class_init_statics(), as zend_std_get_static_property does); visibility is not checked: the
 * caller follows properties it was told to follow.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "php_weft.h"

typedef struct {
	zend_class_entry *ce;      /* the declaring class */
	zend_property_info *info;  /* its static property: offset into CE_STATIC_MEMBERS(ce), type */
	zend_string *key;          /* the key of its value in the arrays read() fills and write() takes */
} weft_static_entry;

typedef struct {
	weft_static_entry *entries;
	uint32_t count;
	zend_object std;
} weft_static_properties;

static zend_class_entry *weft_ce_static_properties;
static zend_object_handlers weft_static_properties_handlers;

static inline weft_static_properties *weft_static_properties_from(zend_object *object)
{
	return (weft_static_properties *) ((char *) object - XtOffsetOf(weft_static_properties, std));
}

static zend_object *weft_static_properties_create(zend_class_entry *ce)
{
	weft_static_properties *set = zend_object_alloc(sizeof(weft_static_properties), ce);
	set->entries = NULL;
	set->count = 0;
	zend_object_std_init(&set->std, ce);
	object_properties_init(&set->std, ce);
	set->std.handlers = &weft_static_properties_handlers;
	return &set->std;
}

static void weft_static_properties_free(zend_object *object)
{
	weft_static_properties *set = weft_static_properties_from(object);
	for (uint32_t i = 0; i < set->count; i++) {
		zend_string_release(set->entries[i].key);
	}
	if (set->entries != NULL) {
		efree(set->entries);
		set->entries = NULL;
	}
	set->count = 0;
	zend_object_std_dtor(object);
}

/* The static property $property declared by $ce, its statics initialized; NULL when there is none. */
static zend_property_info *weft_static_info(zend_class_entry *ce, zval *property)
{
	if (Z_TYPE_P(property) != IS_STRING) {
		return NULL;
	}
	zend_property_info *info = zend_hash_find_ptr(&ce->properties_info, Z_STR_P(property));
	if (info == NULL || !(info->flags & ZEND_ACC_STATIC) || info->ce != ce) {
		return NULL;
	}
	if (UNEXPECTED(!(ce->ce_flags & ZEND_ACC_CONSTANTS_UPDATED))) {
		if (zend_update_class_constants(ce) != SUCCESS) {
			return NULL;
		}
	}
	zend_class_init_statics(ce);
	return info;
}

/* Where the value of an entry lives now. */
static zend_always_inline zval *weft_static_slot(const weft_static_entry *entry)
{
	zval *slot = CE_STATIC_MEMBERS(entry->ce) + entry->info->offset;
	ZVAL_DEINDIRECT(slot);
	return slot;
}

/*
 * __construct(array $classes): $classes maps a declaring class's name in lower case (the class table's
 * own key) to [key => property]. A class that is not loaded, or an entry that names no static property
 * declared by its class, is left out.
 */
ZEND_METHOD(Weft_Ext_StaticProperties, __construct)
{
	HashTable *classes;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(classes)
	ZEND_PARSE_PARAMETERS_END();

	weft_static_properties *set = weft_static_properties_from(Z_OBJ_P(ZEND_THIS));
	if (set->entries != NULL) {
		zend_throw_error(NULL, "Weft\\Ext\\StaticProperties is already constructed");
		RETURN_THROWS();
	}
	uint32_t capacity = 0;
	zval *properties;
	ZEND_HASH_FOREACH_VAL(classes, properties) {
		if (Z_TYPE_P(properties) == IS_ARRAY) {
			capacity += zend_hash_num_elements(Z_ARRVAL_P(properties));
		}
	} ZEND_HASH_FOREACH_END();
	set->entries = safe_emalloc(capacity > 0 ? capacity : 1, sizeof(weft_static_entry), 0);

	zend_string *class_name;
	ZEND_HASH_FOREACH_STR_KEY_VAL(classes, class_name, properties) {
		if (class_name == NULL || Z_TYPE_P(properties) != IS_ARRAY) {
			continue;
		}
		zend_class_entry *ce = zend_lookup_class_ex(class_name, class_name, ZEND_FETCH_CLASS_NO_AUTOLOAD);
		if (ce == NULL || ce->type != ZEND_USER_CLASS) {
			continue;
		}
		zend_string *key;
		zval *property;
		ZEND_HASH_FOREACH_STR_KEY_VAL(Z_ARRVAL_P(properties), key, property) {
			zend_property_info *info = key != NULL ? weft_static_info(ce, property) : NULL;
			if (info == NULL) {
				continue;
			}
			weft_static_entry *entry = &set->entries[set->count++];
			entry->ce = ce;
			entry->info = info;
			entry->key = zend_string_copy(key);
		} ZEND_HASH_FOREACH_END();
	} ZEND_HASH_FOREACH_END();
}

/* read(array &$values): adds each initialized property's value to $values under its key. */
ZEND_METHOD(Weft_Ext_StaticProperties, read)
{
	zval *values;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ZVAL(values)
	ZEND_PARSE_PARAMETERS_END();

	weft_static_properties *set = weft_static_properties_from(Z_OBJ_P(ZEND_THIS));
	ZVAL_DEREF(values);
	if (Z_TYPE_P(values) != IS_ARRAY) {
		zval_ptr_dtor(values);
		array_init_size(values, set->count);
	}
	SEPARATE_ARRAY(values);
	HashTable *into = Z_ARRVAL_P(values);
	if (zend_hash_num_elements(into) == 0) {
		zend_hash_extend(into, set->count, 0);
	}
	for (uint32_t i = 0; i < set->count; i++) {
		zval *slot = weft_static_slot(&set->entries[i]);
		ZVAL_DEREF(slot);
		if (Z_TYPE_P(slot) == IS_UNDEF) {
			/* A typed property not initialized yet: nothing to keep, and nothing to write back. */
			continue;
		}
		Z_TRY_ADDREF_P(slot);
		zend_hash_update(into, set->entries[i].key, slot);
	}
}

/* Writes value into the entry's property. Returns false with an exception thrown when its type refuses it. */
static bool weft_static_assign(const weft_static_entry *entry, zval *value)
{
	zval *slot = weft_static_slot(entry);
	ZVAL_DEREF(value);
	if (Z_ISREF_P(slot)) {
		zend_reference *ref = Z_REF_P(slot);
		if (ZEND_REF_HAS_TYPE_SOURCES(ref)) {
			zval copy;
			ZVAL_COPY(&copy, value);
			/* Takes copy over, or releases it and throws when the type does not allow it. */
			return zend_try_assign_typed_ref(ref, &copy) == SUCCESS;
		}
		slot = &ref->val;
	}
	if (Z_TYPE_P(slot) == Z_TYPE_P(value) && (Z_REFCOUNTED_P(slot)
			? Z_COUNTED_P(slot) == Z_COUNTED_P(value)
			: Z_TYPE_P(value) <= IS_TRUE)) {
		/* Already this very value (the same object or array, or null/false/true): nothing to do. */
		return true;
	}
	zval copy;
	ZVAL_COPY(&copy, value);
	/* On a copy: the check may widen an int to a float in place. */
	if (ZEND_TYPE_IS_SET(entry->info->type) && !zend_verify_property_type(entry->info, &copy, /* strict */ 1)) {
		zval_ptr_dtor(&copy);
		return false;
	}
	zval old;
	ZVAL_COPY_VALUE(&old, slot);
	ZVAL_COPY_VALUE(slot, &copy);
	zval_ptr_dtor(&old);
	return true;
}

/* write(array $values): writes each property whose key $values has. */
ZEND_METHOD(Weft_Ext_StaticProperties, write)
{
	HashTable *values;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(values)
	ZEND_PARSE_PARAMETERS_END();

	weft_static_properties *set = weft_static_properties_from(Z_OBJ_P(ZEND_THIS));
	for (uint32_t i = 0; i < set->count; i++) {
		const weft_static_entry *entry = &set->entries[i];
		zval *value = zend_hash_find(values, entry->key);
		if (value != NULL && !weft_static_assign(entry, value)) {
			RETURN_THROWS();
		}
	}
}

/*
 * Whether $list is a whole list (snapshot() of this object) whose every element is the very value its
 * property holds now: the same object or array, or an equal scalar.
 */
static bool weft_static_unchanged(const weft_static_properties *set, HashTable *list)
{
	if (!HT_IS_PACKED(list) || !HT_IS_WITHOUT_HOLES(list) || zend_hash_num_elements(list) != set->count) {
		return false;
	}
	for (uint32_t i = 0; i < set->count; i++) {
		zval *slot = weft_static_slot(&set->entries[i]);
		ZVAL_DEREF(slot);
		zval *kept = &list->arPacked[i];
		if (Z_TYPE_P(slot) != Z_TYPE_P(kept)) {
			return false;
		}
		if (Z_REFCOUNTED_P(slot) ? Z_COUNTED_P(slot) != Z_COUNTED_P(kept) : !zend_is_identical(slot, kept)) {
			return false;
		}
	}
	return true;
}

/*
 * snapshot(?array $previous = null): every property's value as a list, in the order of keys(): what a switch between two
 * owners saves, without a key to hash per value (read() costs about a third more). A property not
 * initialized (a typed one without a default, not written yet) has no index. $previous, the list this
 * object made last time for the same owner, is returned again when nothing changed since (most switches:
 * a request's coroutine resumed after a query runs to its next query without writing a followed static).
 */
ZEND_METHOD(Weft_Ext_StaticProperties, snapshot)
{
	HashTable *previous = NULL;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT_OR_NULL(previous)
	ZEND_PARSE_PARAMETERS_END();

	weft_static_properties *set = weft_static_properties_from(Z_OBJ_P(ZEND_THIS));
	if (previous != NULL && weft_static_unchanged(set, previous)) {
		/* The same values as in the list given: that list again, nothing built or released. */
		GC_TRY_ADDREF(previous);
		RETURN_ARR(previous);
	}
	array_init_size(return_value, set->count);
	if (set->count == 0) {
		return;
	}
	HashTable *into = Z_ARRVAL_P(return_value);
	bool whole = true;
	for (uint32_t i = 0; i < set->count; i++) {
		zval *slot = weft_static_slot(&set->entries[i]);
		ZVAL_DEREF(slot);
		if (Z_TYPE_P(slot) == IS_UNDEF) {
			whole = false;
			break;
		}
	}
	if (whole) {
		zend_hash_real_init_packed(into);
		ZEND_HASH_FILL_PACKED(into) {
			for (uint32_t i = 0; i < set->count; i++) {
				zval *slot = weft_static_slot(&set->entries[i]);
				ZVAL_DEREF(slot);
				Z_TRY_ADDREF_P(slot);
				ZEND_HASH_FILL_ADD(slot);
			}
		} ZEND_HASH_FILL_END();
		return;
	}
	for (uint32_t i = 0; i < set->count; i++) {
		zval *slot = weft_static_slot(&set->entries[i]);
		ZVAL_DEREF(slot);
		if (Z_TYPE_P(slot) != IS_UNDEF) {
			Z_TRY_ADDREF_P(slot);
			zend_hash_index_update(into, i, slot);
		}
	}
}

/* restore(array $snapshot): writes back what snapshot() of this object returned (each index it has). */
ZEND_METHOD(Weft_Ext_StaticProperties, restore)
{
	HashTable *values;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(values)
	ZEND_PARSE_PARAMETERS_END();

	weft_static_properties *set = weft_static_properties_from(Z_OBJ_P(ZEND_THIS));
	for (uint32_t i = 0; i < set->count; i++) {
		zval *value = zend_hash_index_find(values, i);
		if (value != NULL && !weft_static_assign(&set->entries[i], value)) {
			RETURN_THROWS();
		}
	}
}

/* keys(): the key of each property, in the order of snapshot()'s list. */
ZEND_METHOD(Weft_Ext_StaticProperties, keys)
{
	ZEND_PARSE_PARAMETERS_NONE();

	weft_static_properties *set = weft_static_properties_from(Z_OBJ_P(ZEND_THIS));
	array_init_size(return_value, set->count);
	for (uint32_t i = 0; i < set->count; i++) {
		add_next_index_str(return_value, zend_string_copy(set->entries[i].key));
	}
}

/* How many properties it reads and writes: what was resolved when it was made. */
ZEND_METHOD(Weft_Ext_StaticProperties, count)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG(weft_static_properties_from(Z_OBJ_P(ZEND_THIS))->count);
}

zend_result weft_state_minit(const zend_function_entry *methods)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "StaticProperties", methods);
	weft_ce_static_properties = zend_register_internal_class_ex(&ce, NULL);
	weft_ce_static_properties->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	weft_ce_static_properties->create_object = weft_static_properties_create;
	memcpy(&weft_static_properties_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	weft_static_properties_handlers.offset = XtOffsetOf(weft_static_properties, std);
	weft_static_properties_handlers.free_obj = weft_static_properties_free;
	weft_static_properties_handlers.clone_obj = NULL;
	return SUCCESS;
}
