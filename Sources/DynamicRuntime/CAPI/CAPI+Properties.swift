import CDynamicRuntime
import Glibc

private func propertyArg(_ p: OpaquePointer?) throws(RuntimeError) -> RuntimeProperty {
    guard let property = RuntimeProperty.validated(p) else {
        throw .invalidArgument(.init(expected: "a property", actual: "NULL or another pointer"))
    }
    return property
}

private func attributeList(_ list: UnsafePointer<sf_property_attribute_t>?, _ count: UInt32) throws(RuntimeError) -> [PropertyAttribute] {
    guard count == 0 || list != nil else {
        throw .invalidArgument(.init(operation: "attributes", expected: "a list of \(count) attribute(s)", actual: "NULL"))
    }
    var result: [PropertyAttribute] = []
    for i in 0..<Int(count) {
        let a = list![i]
        guard let name = a.name else {
            throw .invalidArgument(.init(operation: "attribute \(i)", expected: "a name", actual: "NULL"))
        }
        result.append(PropertyAttribute(String(cString: name), a.value.map { String(cString: $0) } ?? ""))
    }
    return result
}

private func declare(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?, replacing: Bool,
                     _ attributes: () throws(RuntimeError) -> [PropertyAttribute]) throws(RuntimeError) {
    let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
    let n = String(cString: try CAPIValues.nonNull(name, "property name", className: c.name))
    let list = try attributes()
    if replacing { try c.replaceProperty(n, attributes: list) } else { try c.addProperty(n, attributes: list) }
}

/// The C function `sf_class_addProperty` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_addProperty")
@_spi(CAPI) public func sf_class_addProperty_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?,
                                                   _ attributes: UnsafePointer<sf_property_attribute_t>?, _ count: UInt32) -> Bool {
    capiStatus { () throws(RuntimeError) in try declare(cls, name, replacing: false) { () throws(RuntimeError) in try attributeList(attributes, count) } } == SF_OK
}

/// The C function `sf_class_addPropertyWithAttributes` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_addPropertyWithAttributes")
@_spi(CAPI) public func sf_class_addPropertyWithAttributes_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?,
                                                                 _ attributes: UnsafePointer<CChar>?) -> Bool {
    capiStatus { () throws(RuntimeError) in
        try declare(cls, name, replacing: false) { () throws(RuntimeError) in
            try PropertyAttribute.parse(String(cString: try CAPIValues.nonNull(attributes, "attribute string")))
        }
    } == SF_OK
}

/// The C function `sf_class_replaceProperty` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_replaceProperty")
@_spi(CAPI) public func sf_class_replaceProperty_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?,
                                                       _ attributes: UnsafePointer<sf_property_attribute_t>?, _ count: UInt32) -> sf_status {
    capiStatus { () throws(RuntimeError) in try declare(cls, name, replacing: true) { () throws(RuntimeError) in try attributeList(attributes, count) } }
}

/// The C function `sf_class_getProperty` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_getProperty")
@_spi(CAPI) public func sf_class_getProperty_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let cls, let name else { return nil }
    return RuntimeClass.from(cls).property(named: String(cString: name))?.raw
}

/// The C function `sf_class_copyPropertyList` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_copyPropertyList")
@_spi(CAPI) public func sf_class_copyPropertyList_impl(_ cls: sf_class_t?, _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<OpaquePointer?>? {
    outCount?.pointee = 0
    guard let cls else { return nil }
    return CList.copy(RuntimeClass.from(cls).properties.map { Optional($0.raw) }, count: outCount)
}

/// The C function `sf_property_getName` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_property_getName")
@_spi(CAPI) public func sf_property_getName_impl(_ p: OpaquePointer?) -> UnsafePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in try propertyArg(p).cName }
}

/// The C function `sf_property_getAttributes` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_property_getAttributes")
@_spi(CAPI) public func sf_property_getAttributes_impl(_ p: OpaquePointer?) -> UnsafePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in try propertyArg(p).cAttributeString }
}

/// The C function `sf_property_copyAttributeValue` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_property_copyAttributeValue")
@_spi(CAPI) public func sf_property_copyAttributeValue_impl(_ p: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in
        let property = try propertyArg(p)
        let n = String(cString: try CAPIValues.nonNull(name, "attribute name"))
        return property.value(of: n).map { strdup($0)! }
    }
}

/// The C function `sf_property_copyAttributeList` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_property_copyAttributeList")
@_spi(CAPI) public func sf_property_copyAttributeList_impl(_ p: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<sf_property_attribute_t>? {
    outCount?.pointee = 0
    return capi(nil) { () throws(RuntimeError) in
        let attributes = try propertyArg(p).attributes
        outCount?.pointee = UInt32(attributes.count)
        guard !attributes.isEmpty else { return nil }
        guard let list = CList.withStrings(attributes.map { [$0.name, $0.value] }, { _, s in
            sf_property_attribute_t(name: s[0], value: s[1])
        }) else {
            throw .invalidArgument(.init(reason: "out of memory"))
        }
        return list
    }
}
