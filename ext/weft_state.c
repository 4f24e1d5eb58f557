/*
 * Weft\Ext\StaticProperties: reads and writes many static properties of user classes in one call, for
 * the values that follow the coroutine (Weft\Coroutine\ProcessState, StateSet).
 *
 * A Laravel worker switches some thirty static properties at every switch between two requests of
 * different framework instances, several times a request. Done in PHP, that is a closure call per
 * declaring class and a fetch by name per property (about 1,700 instructions a property and switch);
 * here it is a hash lookup and a copy. Only public engine API is used (the class table, a class's
 * properties_info, CE_STATIC_MEMBERS and zend_class_init_statics(), as zend_std_get_static_property
 * does); visibility is not checked: the caller follows properties it was told to follow.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "php_weft.h"

/* The slot of $class::$property (its declaring class), or NULL when it is not a static property of it. */
static zval *weft_static_slot(zend_class_entry *ce, zval *property, zend_property_info **info_out)
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
	zval *slot = CE_STATIC_MEMBERS(ce) + info->offset;
	ZVAL_DEINDIRECT(slot);
	*info_out = info;
	return slot;
}

/* $classes is keyed by lower-case class names: the class table's own keys, looked up as they are. */
/* The loaded user class an entry of $classes names, with its property list; NULL: skip the entry. */
static zend_class_entry *weft_static_class(zend_string *lc_name, const zval *properties)
{
	if (lc_name == NULL || Z_TYPE_P(properties) != IS_ARRAY) {
		return NULL;
	}
	zend_class_entry *ce = zend_lookup_class_ex(lc_name, lc_name, ZEND_FETCH_CLASS_NO_AUTOLOAD);
	return ce != NULL && ce->type == ZEND_USER_CLASS ? ce : NULL;
}

/* read(array $classes, array &$values): $classes maps a declaring class (lower case) to [key => property]. */
ZEND_METHOD(Weft_Ext_StaticProperties, read)
{
	HashTable *classes;
	zval *values;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_ARRAY_HT(classes)
		Z_PARAM_ZVAL(values)
	ZEND_PARSE_PARAMETERS_END();

	ZVAL_DEREF(values);
	if (Z_TYPE_P(values) != IS_ARRAY) {
		zval_ptr_dtor(values);
		array_init(values);
	}
	SEPARATE_ARRAY(values);
	HashTable *into = Z_ARRVAL_P(values);

	zend_string *class_name;
	zval *properties;
	ZEND_HASH_FOREACH_STR_KEY_VAL(classes, class_name, properties) {
		zend_class_entry *ce = weft_static_class(class_name, properties);
		if (ce == NULL) {
			continue;
		}
		zend_string *key;
		zval *property;
		ZEND_HASH_FOREACH_STR_KEY_VAL(Z_ARRVAL_P(properties), key, property) {
			zend_property_info *info;
			zval *slot = key != NULL ? weft_static_slot(ce, property, &info) : NULL;
			if (slot == NULL) {
				continue;
			}
			ZVAL_DEREF(slot);
			if (Z_TYPE_P(slot) == IS_UNDEF) {
				/* A typed property not initialized yet: nothing to keep, and nothing to write back. */
				continue;
			}
			Z_TRY_ADDREF_P(slot);
			zend_hash_update(into, key, slot);
		} ZEND_HASH_FOREACH_END();
	} ZEND_HASH_FOREACH_END();
}

/* write(array $classes, array $values): writes each property whose key $values has. */
ZEND_METHOD(Weft_Ext_StaticProperties, write)
{
	HashTable *classes;
	HashTable *values;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_ARRAY_HT(classes)
		Z_PARAM_ARRAY_HT(values)
	ZEND_PARSE_PARAMETERS_END();

	zend_string *class_name;
	zval *properties;
	ZEND_HASH_FOREACH_STR_KEY_VAL(classes, class_name, properties) {
		zend_class_entry *ce = weft_static_class(class_name, properties);
		if (ce == NULL) {
			continue;
		}
		zend_string *key;
		zval *property;
		ZEND_HASH_FOREACH_STR_KEY_VAL(Z_ARRVAL_P(properties), key, property) {
			zval *value = key != NULL ? zend_hash_find(values, key) : NULL;
			if (value == NULL) {
				continue;
			}
			zend_property_info *info;
			zval *slot = weft_static_slot(ce, property, &info);
			if (slot == NULL) {
				continue;
			}
			ZVAL_DEREF(value);
			zval copy;
			ZVAL_COPY(&copy, value);
			if (Z_ISREF_P(slot)) {
				zend_reference *ref = Z_REF_P(slot);
				if (ZEND_REF_HAS_TYPE_SOURCES(ref)) {
					/* Takes copy over, or releases it and throws when the type does not allow it. */
					if (zend_try_assign_typed_ref(ref, &copy) != SUCCESS) {
						RETURN_THROWS();
					}
					continue;
				}
				slot = &ref->val;
			}
			if (Z_REFCOUNTED_P(slot) && Z_REFCOUNTED(copy) && Z_COUNTED_P(slot) == Z_COUNTED(copy)) {
				/* Already this very value: nothing to release, nothing for the cycle collector. */
				zval_ptr_dtor(&copy);
				continue;
			}
			if (ZEND_TYPE_IS_SET(info->type) && !zend_verify_property_type(info, &copy, /* strict */ 1)) {
				zval_ptr_dtor(&copy);
				RETURN_THROWS();
			}
			zval old;
			ZVAL_COPY_VALUE(&old, slot);
			ZVAL_COPY_VALUE(slot, &copy);
			zval_ptr_dtor(&old);
		} ZEND_HASH_FOREACH_END();
	} ZEND_HASH_FOREACH_END();
}

zend_result weft_state_minit(const zend_function_entry *methods)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Weft\\Ext", "StaticProperties", methods);
	zend_class_entry *registered = zend_register_internal_class_ex(&ce, NULL);
	registered->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	return SUCCESS;
}
