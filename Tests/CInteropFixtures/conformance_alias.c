// Class aliases from C: libobjc2's class_registerAlias_np (Test/RuntimeTest.m's
// testRegisterAlias) re-expressed, with the refusals and the alias's end with its class.
#include "CInteropFixtures.h"

#include <string.h>

#include "conformance_check.h"

int cf_scenario_alias(const char *name) {
    char n[256], alias[256], other[256];
    snprintf(n, sizeof n, "%s.Real", name);
    snprintf(alias, sizeof alias, "%s.Alias", name);
    snprintf(other, sizeof other, "%s.Other", name);
    sf_class_t cls = sf_allocateClassPair(NULL, n);
    CHECK(cls);
    // Only a registered class takes an alias.
    CHECK(!sf_class_registerAlias_np(cls, alias));
    CHECK(sf_last_error() == SF_ERR_CLASS_REGISTERED);
    sf_registerClassPair(cls);
    sf_class_t otherCls = sf_allocateClassPair(NULL, other);
    CHECK(otherCls);
    sf_registerClassPair(otherCls);

    CHECK(sf_getClass(alias) == NULL);
    CHECK(sf_class_registerAlias_np(cls, alias));
    CHECK(sf_last_error() == SF_OK);
    CHECK(sf_getClass(alias) == cls);
    CHECK(sf_lookUpClass(alias) == cls);
    CHECK(sf_lookUpClass(n) == cls);
    CHECK(sf_getMetaClass(alias) == sf_getMetaClass(n));
    CHECK(strcmp(sf_class_getName(sf_getClass(alias)), n) == 0);
    sf_id obj = sf_class_createInstance(sf_getClass(alias));
    CHECK(obj && sf_object_getClass(obj) == cls);
    sf_release(obj);
    // The class is listed once, under its own name.
    unsigned int count = 0, seen = 0;
    sf_class_t *list = sf_copyClassList(&count);
    for (unsigned int i = 0; i < count; i++) seen += list[i] == cls;
    sf_free(list);
    CHECK(seen == 1);

    // A second alias is fine; a name in use is not, whoever uses it.
    snprintf(n, sizeof n, "%s.Second", name);
    CHECK(sf_class_registerAlias_np(cls, n));
    CHECK(sf_getClass(n) == cls);
    CHECK(!sf_class_registerAlias_np(cls, alias));
    CHECK(sf_last_error() == SF_ERR_DUPLICATE_CLASS);
    CHECK(!sf_class_registerAlias_np(otherCls, alias));
    CHECK(sf_last_error() == SF_ERR_DUPLICATE_CLASS);
    CHECK(strstr(sf_last_error_message(), ".Real"));
    CHECK(!sf_class_registerAlias_np(otherCls, sf_class_getName(cls)));
    CHECK(sf_last_error() == SF_ERR_DUPLICATE_CLASS);
    CHECK(!sf_class_registerAlias_np(cls, sf_class_getName(cls)));
    CHECK(sf_last_error() == SF_ERR_DUPLICATE_CLASS);
    CHECK(sf_getClass(sf_class_getName(otherCls)) == otherCls);
    // No class can be made under an alias.
    CHECK(sf_allocateClassPair(NULL, alias) == NULL);
    CHECK(sf_last_error() == SF_ERR_DUPLICATE_CLASS);
    CHECK(strstr(sf_last_error_message(), "alias"));

    CHECK(!sf_class_registerAlias_np(NULL, "cfAliasOfNothing") && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(!sf_class_registerAlias_np(cls, NULL) && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(!sf_class_registerAlias_np(cls, "") && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    snprintf(other, sizeof other, "%s.MetaAlias", name);
    CHECK(!sf_class_registerAlias_np(sf_getMetaClass(alias), other) && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_getClass(other) == NULL);
    CHECK(sf_lookUpClass(NULL) == NULL);

    // Disposal takes the aliases with the class: the names are free again.
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    CHECK(sf_getClass(alias) == NULL && sf_lookUpClass(n) == NULL && sf_getMetaClass(alias) == NULL);
    CHECK(sf_class_registerAlias_np(otherCls, alias));
    CHECK(sf_getClass(alias) == otherCls);
    CHECK(sf_disposeClassPair(otherCls) == SF_OK);
    sf_class_t reuse = sf_allocateClassPair(NULL, alias);
    CHECK(reuse);
    sf_registerClassPair(reuse);
    CHECK(sf_getClass(alias) == reuse);
    CHECK(sf_disposeClassPair(reuse) == SF_OK);
    return 0;
}
