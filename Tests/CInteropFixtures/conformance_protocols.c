// Protocols from C: libobjc2 Test/ProtocolCreation.m, objc4 test/protocol.m and
// test/protocol_copyMethodList.m, through the public header only.
#include "CInteropFixtures.h"

#include <stdlib.h>
#include <string.h>

#include "conformance_check.h"

int cf_scenario_protocols(const char *name) {
    char base_name[256], sub_name[256], cls_name[256], subcls_name[256];
    snprintf(base_name, sizeof base_name, "%s.Base", name);
    snprintf(sub_name, sizeof sub_name, "%s.Sub", name);
    snprintf(cls_name, sizeof cls_name, "%s.Class", name);
    snprintf(subcls_name, sizeof subcls_name, "%s.Subclass", name);

    sf_protocol_t base = sf_allocateProtocol(base_name);
    CHECK(base);
    CHECK(sf_getProtocol(base_name) == NULL);  // not registered yet
    CHECK(sf_allocateProtocol(base_name) == NULL && sf_last_error() == SF_ERR_DUPLICATE_PROTOCOL);
    CHECK(sf_protocol_addMethodDescription(base, SEL("cfDraw"), "v@:", true, true) == SF_OK);
    CHECK(sf_protocol_addMethodDescription(base, SEL("cfSize:"), "q@:q", false, true) == SF_OK);
    CHECK(sf_protocol_addMethodDescription(base, SEL("cfMake"), "@@:", true, false) == SF_OK);
    // Bad input: reserved selector, malformed types, declared twice, NULLs.
    CHECK(sf_protocol_addMethodDescription(base, SEL(".cxx_destruct"), "v@:", true, true) == SF_ERR_RESERVED_SELECTOR);
    CHECK(sf_protocol_addMethodDescription(base, SEL("cfBad"), "{oops", true, true) == SF_ERR_BAD_ENCODING);
    CHECK(sf_protocol_addMethodDescription(base, SEL("cfDraw"), "v@:", true, true) == SF_ERR_METHOD_EXISTS);
    CHECK(sf_protocol_addMethodDescription(NULL, SEL("cfDraw"), "v@:", true, true) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_protocol_addMethodDescription((sf_protocol_t)cls_name, SEL("x"), "v@:", true, true) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_registerProtocol(base) == SF_OK);
    CHECK(sf_registerProtocol(base) == SF_ERR_DUPLICATE_PROTOCOL);
    CHECK(sf_getProtocol(base_name) == base);
    CHECK(strcmp(sf_protocol_getName(base), base_name) == 0);
    CHECK(sf_protocol_addMethodDescription(base, SEL("cfLate"), "v@:", true, true) == SF_ERR_CLASS_REGISTERED);

    sf_protocol_t sub = sf_allocateProtocol(sub_name);
    CHECK(sub);
    CHECK(sf_protocol_addProtocol(sub, sub) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_protocol_addProtocol(sub, base) == SF_OK);
    CHECK(sf_protocol_addMethodDescription(sub, SEL("cfFill"), "v@:d", true, true) == SF_OK);
    CHECK(sf_protocol_addProtocol(base, sub) == SF_ERR_CLASS_REGISTERED);  // no cycles: base is sealed
    CHECK(sf_registerProtocol(sub) == SF_OK);

    // Method descriptions: own and incorporated, by kind.
    sf_method_description d = sf_protocol_getMethodDescription(sub, SEL("cfDraw"), true, true);
    CHECK(d.name == SEL("cfDraw") && strcmp(d.types, "v@:") == 0);
    d = sf_protocol_getMethodDescription(base, SEL("cfSize:"), false, true);
    CHECK(d.name == SEL("cfSize:") && strcmp(d.types, "q@:q") == 0);
    d = sf_protocol_getMethodDescription(base, SEL("cfSize:"), true, true);  // it is optional
    CHECK(d.name == NULL && d.types == NULL);
    d = sf_protocol_getMethodDescription(base, SEL("cfMake"), true, false);
    CHECK(d.name == SEL("cfMake"));
    CHECK(sf_protocol_getMethodDescription(base, SEL("cfMake"), true, true).name == NULL);

    unsigned int n = 99;
    sf_method_description *list = sf_protocol_copyMethodDescriptionList(base, true, true, &n);
    CHECK(n == 1 && list && list[0].name == SEL("cfDraw"));
    free(list);
    list = sf_protocol_copyMethodDescriptionList(sub, true, true, &n);  // own only
    CHECK(n == 1 && list[0].name == SEL("cfFill") && strcmp(list[0].types, "v@:d") == 0);
    free(list);
    CHECK(sf_protocol_copyMethodDescriptionList(sub, false, false, &n) == NULL && n == 0);
    sf_protocol_t *protos = sf_protocol_copyProtocolList(sub, &n);
    CHECK(n == 1 && protos[0] == base);
    free(protos);
    CHECK(sf_protocol_conformsToProtocol(sub, base));
    CHECK(!sf_protocol_conformsToProtocol(base, sub));
    protos = sf_copyProtocolList(&n);
    bool seen_base = false, seen_sub = false;
    for (unsigned int i = 0; i < n; i++) {
        seen_base |= protos[i] == base;
        seen_sub |= protos[i] == sub;
    }
    free(protos);
    CHECK(seen_base && seen_sub);

    // Adoption; conformance through the superclass and incorporated protocols.
    sf_class_t cls = sf_allocateClassPair(NULL, cls_name);
    sf_registerClassPair(cls);
    sf_class_t subcls = sf_allocateClassPair(cls, subcls_name);
    sf_registerClassPair(subcls);
    CHECK(!sf_class_conformsToProtocol(cls, base));
    CHECK(sf_class_addProtocol(cls, sub));
    CHECK(!sf_class_addProtocol(cls, sub) && sf_last_error() == SF_OK);  // already adopted
    CHECK(sf_class_conformsToProtocol(cls, sub) && sf_class_conformsToProtocol(cls, base));
    CHECK(sf_class_conformsToProtocol(subcls, base));
    protos = sf_class_copyProtocolList(cls, &n);
    CHECK(n == 1 && protos[0] == sub);
    free(protos);
    CHECK(sf_class_copyProtocolList(subcls, &n) == NULL && n == 0);
    sf_id obj = sf_class_createInstance(subcls);
    CHECK(sf_object_conformsToProtocol(obj, base));
    CHECK(!sf_object_conformsToProtocol(obj, NULL));
    sf_release(obj);

    // An unregistered protocol cannot be adopted.
    snprintf(sub_name, sizeof sub_name, "%s.Unfinished", name);
    sf_protocol_t unfinished = sf_allocateProtocol(sub_name);
    CHECK(!sf_class_addProtocol(cls, unfinished) && sf_last_error() == SF_ERR_CLASS_REGISTERED);

    CHECK(sf_disposeClassPair(subcls) == SF_OK);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}
