import CShims
import Glibc

/// An instance variable: a typed slot at a fixed offset in every instance of a class.
public struct Ivar: Hashable, Sendable {
    /// The variable's name, unique along the class chain.
    public let name: String
    /// Its type. Object-typed (`@`) ivars are strong: set retains, dealloc releases.
    public let type: TypeEncoding
    /// Byte offset from the start of the object.
    public let offset: Int
    /// Size in bytes.
    public let size: Int
}

/// A class created at run time, with its metaclass (for class methods), an optional
/// superclass, a method table, instance variables and a lookup cache.
///
/// ```swift
/// let calc = try RuntimeClass(name: "Calculator")
/// try calc.addMethod("add:to:") { (self_, a: Int, b: Int) in a + b }
/// let c = try calc.createInstance()
/// let sum: Int = try c.send("add:to:", 1, 2)
/// ```
public final class RuntimeClass: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The C class, usable with the C API. Also the class object that receives class methods.
    public let raw: sf_class_t
    /// The class's name (metaclasses share their class's name).
    public let name: String
    /// The superclass, or nil for a root class. A root metaclass's superclass is its root class.
    public let superclass: RuntimeClass?
    /// True for a metaclass, whose methods are class methods.
    public let isMetaclass: Bool
    /// True for the private per-object subclasses that instance hooks use.
    public let isHidden: Bool

    private var _metaclass: RuntimeClass?
    private unowned(unsafe) var _instanceClass: RuntimeClass?

    // Guarded by Runtime.state.lock.
    var methods: [Selector: MethodRecord] = [:]
    var ivarList: [Ivar] = []
    var subclasses: [RuntimeClass] = []
    private(set) var isRegistered = false
    private(set) var isDisposed = false
    /// For a hidden per-object class: the object it was made for (lock held).
    var hiddenObject: sf_id?
    /// Closure IMPs handed out as raw pointers through the C API stay alive until dispose.
    var keptAlive: [ClosureIMP] = []
    /// Offsets of strong object ivars, this class's and inherited; fixed at registration.
    private(set) var objectIvarOffsets: [Int] = []

    /// The metaclass, which holds the class methods. For a metaclass: the root metaclass.
    public var metaclass: RuntimeClass { _metaclass ?? _instanceClass!.rootClass.metaclass }

    /// For a metaclass, the class whose class methods it holds; for a class, itself.
    public var instanceClass: RuntimeClass { isMetaclass ? _instanceClass! : self }

    /// The top of the superclass chain.
    public var rootClass: RuntimeClass {
        var c = instanceClass
        while let s = c.superclass { c = s }
        return c
    }

    /// Bytes an instance occupies, header and inherited ivars included.
    public var instanceSize: Int { Int(sf_class_getInstanceSize(raw)) }

    /// Creates and registers a class in one step, with its instance variables.
    ///
    /// - Throws: `RuntimeError.duplicateClass` if the name is taken, or an encoding error for a
    ///   bad ivar type.
    public convenience init(name: String, superclass: RuntimeClass? = nil,
                            ivars: [(name: String, type: TypeEncoding)] = []) throws(RuntimeError) {
        try self.init(unregisteredName: name, superclass: superclass, hidden: false)
        for ivar in ivars { try addIvar(ivar.name, type: ivar.type) }
        register()
    }

    /// Reserves `name` and creates a class that can still take ivars; call `register()` next.
    public static func allocate(name: String, superclass: RuntimeClass? = nil) throws(RuntimeError) -> RuntimeClass {
        try RuntimeClass(unregisteredName: name, superclass: superclass, hidden: false)
    }

    /// The registered class with that name, if any. A pair that is only allocated reserves
    /// its name but is not returned: it cannot make instances yet (like `objc_getClass`).
    public static func named(_ name: String) -> RuntimeClass? {
        Runtime.state.lock.withLock { Runtime.state.classesByName[name].flatMap { $0.isRegistered ? $0 : nil } }
    }

    /// Every registered class, sorted by name (allocated, unregistered pairs are left out).
    public static var allClasses: [RuntimeClass] {
        Runtime.state.lock.withLock {
            Runtime.state.classesByName.values.filter(\.isRegistered).sorted { $0.name < $1.name }
        }
    }

    init(unregisteredName name: String, superclass: RuntimeClass?, hidden: Bool) throws(RuntimeError) {
        Runtime.ensureInitialized()
        if let superclass, superclass.isMetaclass {
            throw .invalidArgument(className: name, selector: "-", reason: "the superclass '\(superclass.name)' is a metaclass")
        }
        if let superclass, !superclass.isRegistered {
            throw .classNotRegistered(name: superclass.name, operation: "subclass it")
        }
        if name.isEmpty || name.utf8.contains(0) {
            throw .invalidArgument(className: name, selector: "-", reason: "a class name must be non-empty and contain no NUL")
        }
        self.name = name
        self.superclass = superclass
        self.isMetaclass = false
        self.isHidden = hidden
        raw = RuntimeClass.allocateStruct()
        let meta = RuntimeClass(metaclassFor: name, superclass: superclass?.metaclass, hidden: hidden)
        _metaclass = meta
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            if !hidden {
                guard Runtime.state.classesByName[name] == nil else {
                    throw .duplicateClass(name: name)
                }
                Runtime.state.classesByName[name] = self
            }
            let size = superclass?.instanceSize ?? sf_object_header_size()
            let root = superclass?.rootClass.metaclass ?? meta
            sf_class_init(raw, meta.raw, superclass?.raw, strdup(name), size,
                          hidden ? UInt32(SF_CLASS_HIDDEN) : 0, Unmanaged.passUnretained(self).toOpaque())
            meta._instanceClass = self
            // A root metaclass inherits from its root class, as in Objective-C.
            let metaSuper = superclass?.metaclass ?? self
            sf_class_init(meta.raw, root.raw, metaSuper.raw, strdup(name), sf_class_struct_size(),
                          UInt32(SF_CLASS_META) | (hidden ? UInt32(SF_CLASS_HIDDEN) : 0),
                          Unmanaged.passUnretained(meta).toOpaque())
            meta.setSuperclassLinkage(metaSuper)
            superclass?.subclasses.append(self)
            metaSuper.subclasses.append(meta)
            objectIvarOffsets = superclass?.objectIvarOffsets ?? []
        }
    }

    private var metaSuperclass: RuntimeClass?

    private init(metaclassFor name: String, superclass: RuntimeClass?, hidden: Bool) {
        self.name = name
        self.superclass = superclass
        self.isMetaclass = true
        self.isHidden = hidden
        raw = RuntimeClass.allocateStruct()
    }

    private func setSuperclassLinkage(_ s: RuntimeClass) {
        metaSuperclass = s
    }

    /// The class method lookup continues here (for a root metaclass: the root class).
    var lookupSuperclass: RuntimeClass? { isMetaclass ? metaSuperclass : superclass }

    private static func allocateStruct() -> sf_class_t {
        UnsafeMutableRawPointer.allocate(byteCount: sf_class_struct_size(), alignment: 16)
            .assumingMemoryBound(to: sf_class.self)
    }

    /// The Swift class for a C class made by this runtime.
    static func from(_ raw: sf_class_t) -> RuntimeClass {
        Unmanaged<RuntimeClass>.fromOpaque(sf_class_swift(raw)).takeUnretainedValue()
    }

    /// Makes the class usable: instances can be created and its layout is fixed.
    public func register() {
        Runtime.state.lock.withLock {
            isRegistered = true
            metaclass.isRegistered = true
            sf_class_set_info(raw, sf_class_info(raw) | UInt32(SF_CLASS_REGISTERED))
        }
    }

    // MARK: - Instance variables

    /// Adds an instance variable. Only before `register()`; names are unique along the chain.
    @discardableResult
    public func addIvar(_ name: String, type: TypeEncoding) throws(RuntimeError) -> Ivar {
        if case .void = type {
            throw .invalidArgument(className: self.name, selector: "-", reason: "ivar '\(name)' cannot be void")
        }
        let sig = try Signature("v@:" + type.encoding)
        let ffiType = sig.raw.pointee.arg_types[2]!
        let size = Int(sf_ffi_type_size(ffiType))
        let align = max(Int(sf_ffi_type_alignment(ffiType)), 1)
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> Ivar in
            guard !isRegistered else { throw .classAlreadyRegistered(name: self.name, operation: "add ivar '\(name)'") }
            guard !isMetaclass else { throw .invalidArgument(className: self.name, selector: "-", reason: "metaclasses have no ivars") }
            if ivarNamed(name) != nil {
                throw .invalidArgument(className: self.name, selector: "-", reason: "an ivar named '\(name)' already exists in the class chain")
            }
            let start = Int(sf_class_getInstanceSize(raw))
            let offset = (start + align - 1) / align * align
            let ivar = Ivar(name: name, type: type, offset: offset, size: size)
            ivarList.append(ivar)
            sf_class_set_instance_size(raw, offset + size)
            if case .object = type { objectIvarOffsets.append(offset) }
            return ivar
        }
    }

    /// The ivar with that name, searching superclasses too.
    public func ivar(named name: String) -> Ivar? {
        Runtime.state.lock.withLock { ivarNamed(name) }
    }

    private func ivarNamed(_ name: String) -> Ivar? {
        var c: RuntimeClass? = self
        while let k = c {
            if let v = k.ivarList.first(where: { $0.name == name }) { return v }
            c = k.superclass
        }
        return nil
    }

    /// This class's own ivars, in declaration order.
    public var ivars: [Ivar] { Runtime.state.lock.withLock { ivarList } }

    // MARK: - Hierarchy

    /// Whether `other` is this class or one of its superclasses.
    public func isSubclass(of other: RuntimeClass) -> Bool {
        var c: RuntimeClass? = self
        while let k = c {
            if k === other { return true }
            c = k.lookupSuperclass
        }
        return false
    }

    /// Whether instances (for a metaclass: the class) respond to `selector`.
    public func responds(to selector: Selector) -> Bool {
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        return sf_lookup_method(raw, selector.raw) != nil
    }

    /// This class's own methods (not inherited ones), sorted by name.
    public var methodList: [Method] {
        Runtime.state.lock.withLock { methods.values.map(Method.init(record:)) }
            .sorted { $0.selector.name < $1.selector.name }
    }

    /// The method that a send of `selector` to an instance would run, inherited or own.
    public func method(for selector: Selector) -> Method? {
        Runtime.state.lock.withLock { findMethod(selector).map(Method.init(record:)) }
    }

    /// This class's own method for `selector`, if it defines one.
    public func ownMethod(for selector: Selector) -> Method? {
        Runtime.state.lock.withLock { methods[selector].map(Method.init(record:)) }
    }

    func findMethod(_ selector: Selector) -> MethodRecord? {
        var c: RuntimeClass? = self
        while let k = c {
            if let m = k.methods[selector] { return m }
            c = k.lookupSuperclass
        }
        return nil
    }

    /// The slow path: walk the chain under the lock and fill this class's cache.
    func lookUpAndCache(_ selector: Selector) -> sf_method_t? {
        Runtime.state.lock.withLock {
            guard let m = findMethod(selector) else {
                // Remember the miss: the next send forwards without taking the lock.
                let marker = sf_forward_method_marker()
                sf_cache_insert(raw, selector.raw, marker)
                return marker
            }
            sf_cache_insert(raw, selector.raw, m.raw)
            return m.raw
        }
    }

    /// Empties this class's cache and its subclasses' (lock held).
    func flushCaches() {
        sf_cache_flush(raw)
        for s in subclasses { s.flushCaches() }
    }

    // MARK: - Lifetime

    /// Destroys the class and its metaclass, freeing their methods and closures.
    ///
    /// - Throws: `RuntimeError.classInUse` while instances or subclasses exist.
    public func dispose() throws(RuntimeError) {
        guard !isMetaclass else {
            throw .invalidArgument(className: name, selector: "-", reason: "dispose the class, not its metaclass")
        }
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard !isDisposed else { throw .classInUse(name: name, reason: "already disposed") }
            let live = sf_class_live_instances(raw)
            if live > 0 { throw .classInUse(name: name, reason: "\(live) instance(s) still alive") }
            let subs = subclasses.filter { $0 !== metaclass }
            if !subs.isEmpty {
                throw .classInUse(name: name, reason: "subclass(es) \(subs.map(\.name).joined(separator: ", ")) still exist")
            }
            let meta = metaclass
            let metaSubs = meta.subclasses
            if !metaSubs.isEmpty {
                throw .classInUse(name: name, reason: "subclass(es) \(metaSubs.map(\.name).joined(separator: ", ")) still exist")
            }
            isDisposed = true
            if !isHidden, Runtime.state.classesByName[name] === self { Runtime.state.classesByName[name] = nil }
            superclass?.subclasses.removeAll { $0 === self }
            meta.lookupSuperclass?.subclasses.removeAll { $0 === meta }
            // Readers may still be inside this class's cache or methods: free after a grace period.
            let doomed = [self, meta]
            Runtime.state.retire {
                for c in doomed { c.releaseStorage() }
            }
        }
        Runtime.state.collectGarbage()
    }

    private func releaseStorage() {
        // The class object's associations go with it, as an instance's go at dealloc. (Runs
        // from collectGarbage, outside the lock: a release may deallocate and re-enter.)
        if let side = sf_object_side(sf_class_as_object(raw)) {
            Unmanaged<ObjectSideTable>.fromOpaque(side).takeRetainedValue().releaseAssociations()
        }
        // A hook still installed here holds its record and the record its hook: break the
        // cycle so the trampoline is freed with the class.
        for m in methods.values {
            m.hook?.trampoline = nil
            m.hook?.record = nil
            m.hook = nil
        }
        methods = [:]  // each record frees its C entry when the last reference goes
        keptAlive = []
        subclasses = []
        sf_cache_destroy(raw)
        if let namePtr = sf_class_getName(raw) { free(UnsafeMutableRawPointer(mutating: namePtr)) }
        _metaclass = nil
    }

    deinit {
        raw.deallocate()
    }

    // MARK: - Identity

    public static func == (a: RuntimeClass, b: RuntimeClass) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { isMetaclass ? "<metaclass \(name)>" : "<class \(name)>" }
}
