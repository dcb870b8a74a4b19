import CDynamicRuntime
import Glibc

/// A declared property of a class (`objc_property_t`): a name and checked attributes.
///
/// Properties are immortal, as protocols are: a C caller's handle and the strings it read
/// stay valid for the life of the process, even after `replaceProperty` or the class's
/// disposal (a replaced attribute string is kept, not freed).
public final class RuntimeProperty: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The property's name.
    public let name: String
    /// The name as an immortal C string.
    let cName: UnsafePointer<CChar>
    // Guarded by Runtime.state.lock.
    private var _attributes: [PropertyAttribute]
    private var cAttributes: UnsafePointer<CChar>
    /// Replaced attribute strings: C callers may still read them.
    private var oldCAttributes: [UnsafePointer<CChar>] = []

    init(name: String, attributes: [PropertyAttribute]) {
        self.name = name
        cName = UnsafePointer(strdup(name)!)
        _attributes = attributes
        cAttributes = UnsafePointer(strdup(PropertyAttribute.string(attributes))!)
    }

    /// The attributes, in order.
    public var attributes: [PropertyAttribute] { Runtime.state.lock.withLock { _attributes } }

    /// The attributes (lock held).
    var attributesNolock: [PropertyAttribute] { _attributes }

    /// The attribute string (`property_getAttributes`), e.g. `T@,&,N,V_name`.
    public var attributeString: String { PropertyAttribute.string(attributes) }

    /// The value of the attribute named `attributeName` (`property_copyAttributeValue`); nil
    /// when the property has none ("" for a flag it has).
    public func value(of attributeName: String) -> String? {
        attributes.first { $0.name == attributeName }?.value
    }

    /// The attribute string as an immortal C string (lock held to read it).
    var cAttributeString: UnsafePointer<CChar> { Runtime.state.lock.withLock { cAttributes } }

    /// Replaces the attributes (lock held); the old C string stays valid for C readers.
    func replaceAttributesNolock(_ attributes: [PropertyAttribute]) {
        Runtime.state.lock.assertHeld()
        _attributes = attributes
        oldCAttributes.append(cAttributes)
        cAttributes = UnsafePointer(strdup(PropertyAttribute.string(attributes))!)
    }

    /// The C handle.
    public var raw: OpaquePointer { OpaquePointer(ObjectWord(unretained: self).pointer) }

    /// The property behind a C handle, or nil when `raw` is not one (never dereferenced unless
    /// it is).
    static func validated(_ raw: OpaquePointer?) -> RuntimeProperty? {
        guard let raw else { return nil }
        return Runtime.state.lock.withLock { PropertyTable.all[UnsafeRawPointer(raw)] }
    }

    /// Whether the two are the same (identity, not contents).
    public static func == (a: RuntimeProperty, b: RuntimeProperty) -> Bool { a === b }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// A readable form, for logs and test failures.
    public var description: String { "@property \(name) \(attributeString)" }
}

/// Every property ever declared, by handle: what keeps them immortal (lock held).
enum PropertyTable {
    nonisolated(unsafe) static var all: [UnsafeRawPointer: RuntimeProperty] = [:]
}

extension RuntimeClass {
    /// Declares a property (`class_addProperty`) from an attribute string such as
    /// `T@"Name",&,N,V_name`. A metaclass takes class properties.
    ///
    /// - Throws: `malformedEncoding` for bad attributes (see `PropertyAttribute.parse`),
    ///   `invalidArgument` for an empty name or one this class already declares.
    @discardableResult
    public func addProperty(_ name: String, attributes: String) throws(RuntimeError) -> RuntimeProperty {
        try setProperty(name, PropertyAttribute.parse(attributes), replacing: false)
    }

    /// Declares a property from an attribute list (checked as the string form is).
    @discardableResult
    public func addProperty(_ name: String, attributes: [PropertyAttribute]) throws(RuntimeError) -> RuntimeProperty {
        try setProperty(name, PropertyAttribute.check(attributes), replacing: false)
    }

    /// Replaces a property's attributes, or adds it (`class_replaceProperty`).
    @discardableResult
    public func replaceProperty(_ name: String, attributes: String) throws(RuntimeError) -> RuntimeProperty {
        try setProperty(name, PropertyAttribute.parse(attributes), replacing: true)
    }

    /// Replaces a property's attributes, or adds it, from an attribute list.
    @discardableResult
    public func replaceProperty(_ name: String, attributes: [PropertyAttribute]) throws(RuntimeError) -> RuntimeProperty {
        try setProperty(name, PropertyAttribute.check(attributes), replacing: true)
    }

    /// The property named `name`, declared by this class or a superclass (`class_getProperty`).
    public func property(named name: String) -> RuntimeProperty? {
        Runtime.state.lock.withLock {
            var c: RuntimeClass? = self
            while let k = c {
                if let p = k.propertyList.first(where: { $0.name == name }) { return p }
                c = k.lookupSuperclass
            }
            return nil
        }
    }

    /// The properties this class declared itself, in order (`class_copyPropertyList`).
    public var properties: [RuntimeProperty] { Runtime.state.lock.withLock { propertyList } }

    private func setProperty(_ name: String, _ attributes: [PropertyAttribute], replacing: Bool) throws(RuntimeError) -> RuntimeProperty {
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw .invalidArgument(.init(className: self.name, expected: "a property name, non-empty and without NUL", actual: "\"\(name)\""))
        }
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> RuntimeProperty in
            if let existing = propertyList.first(where: { $0.name == name }) {
                guard replacing else {
                    throw .invalidArgument(.init(className: self.name, selector: name, expected: "a new property name (replaceProperty changes one)", actual: "'\(name)', already declared"))
                }
                existing.replaceAttributesNolock(attributes)
                return existing
            }
            let p = RuntimeProperty(name: name, attributes: attributes)
            PropertyTable.all[UnsafeRawPointer(p.raw)] = p
            propertyList.append(p)
            return p
        }
    }
}

extension RuntimeProperty {
    /// A new property with the same name and attributes, for a duplicated class (lock held).
    func duplicateNolock() -> RuntimeProperty {
        Runtime.state.lock.assertHeld()
        let p = RuntimeProperty(name: name, attributes: attributesNolock)
        PropertyTable.all[UnsafeRawPointer(p.raw)] = p
        return p
    }
}
