import CDynamicRuntime
import Glibc
import Synchronization

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
    /// Changes only through `setSuperclass(_:)`, under the runtime lock.
    public internal(set) var superclass: RuntimeClass?
    /// True for a metaclass, whose methods are class methods.
    public let isMetaclass: Bool
    /// True for the private subclass that instances with hooks of their own share.
    public let isHidden: Bool

    var _metaclass: RuntimeClass?
    private unowned(unsafe) var _instanceClass: RuntimeClass?

    // Guarded by Runtime.state.lock.
    var methods: MethodTable = [:]
    var ivarList: [Ivar] = []
    var subclasses: [RuntimeClass] = []
    var isRegistered = false
    var isDisposed = false
    /// The hidden subclass shared by every instance with hooks of its own, once one had any
    /// (lock held).
    var objectHookClass: RuntimeClass?
    /// Closure IMPs handed out as raw pointers through the C API stay alive until dispose.
    var keptAlive: [ClosureIMP] = []
    /// Offsets of strong object ivars, this class's and inherited; fixed at registration.
    var objectIvarOffsets: [Int] = []
    /// Offsets of weak object ivars, this class's and inherited; fixed at registration.
    var weakIvarOffsets: [Int] = []
    /// The ivar layouts handed to C, interned: valid for the class's life (lock held).
    var cIvarLayouts: CIvarLayouts?
    /// The C handles of this class's own ivars, made on first request (lock held).
    var cIvarHandles: CIvarHandles?
    /// The aliases registered for this class, removed with it.
    var aliasKeys: [NameKey] = []
    /// The alignment instances are allocated with: the largest of the ivars' (inherited ones
    /// included) and malloc's 16. Fixed at registration.
    var instanceAlignment = 16
    /// Protocols this class adopted itself, in adoption order.
    var adoptedProtocols: [RuntimeProtocol] = []
    /// Properties this class declared itself, in declaration order.
    var propertyList: [RuntimeProperty] = []
    /// `+initialize`: `ClassInitialization.none`, `.running` or `.done` (visible instance
    /// classes only). Read without a lock on the miss path.
    let initializationState = Atomic<Int>(ClassInitialization.none)
    /// The thread running `+initialize` (guarded by `ClassInitialization.mutex`).
    var initializingThread: pthread_t?

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

    /// The registered class with that name or alias (`registerAlias(_:)`), if any. A pair that
    /// is only allocated reserves its name but is not returned: it cannot make instances yet
    /// (like `objc_getClass`).
    public static func named(_ name: String) -> RuntimeClass? { named(key: NameKey(name)) }

    /// The registered class whose name or alias has exactly these bytes.
    static func named(key: NameKey) -> RuntimeClass? {
        Runtime.state.lock.withLock { namedLocked(key: key) }
    }

    /// `named(key:)` (lock held).
    static func namedLocked(key: NameKey) -> RuntimeClass? {
        Runtime.state.lock.assertHeld()
        return (Runtime.state.classesByName[key] ?? Runtime.state.classAliases[key]).flatMap { $0.isRegistered ? $0 : nil }
    }

    /// Every registered class, sorted by name (allocated, unregistered pairs are left out).
    public static var allClasses: [RuntimeClass] {
        Runtime.state.lock.withLock {
            Runtime.state.classesByName.values.filter(\.isRegistered).sorted { $0.name < $1.name }
        }
    }

    /// `key`, when given, is the name's exact bytes (a C name that `name` only displays).
    init(unregisteredName name: String, key: NameKey? = nil, superclass: RuntimeClass?, hidden: Bool) throws(RuntimeError) {
        let key = key ?? NameKey(name)
        Runtime.ensureInitialized()
        // Made outside the lock its lookups hold (its own class is hidden, and skips this).
        if !hidden { _ = RootDealloc.record }
        if let superclass, superclass.isMetaclass {
            throw .invalidArgument(.init(className: name, expected: "an ordinary class as superclass", actual: "metaclass '\(superclass.name)'"))
        }
        if let superclass, !superclass.isRegistered {
            throw .classNotRegistered(.init(className: superclass.name, operation: "subclass it"))
        }
        if name.isEmpty || key.containsNUL {
            throw .invalidArgument(.init(expected: "a class name, non-empty and without NUL", actual: "\"\(name)\""))
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
                guard Runtime.state.classesByName[key] == nil else {
                    throw .duplicateClass(.init(className: name))
                }
                if let aliased = Runtime.state.classAliases[key] {
                    throw .duplicateClass(.init(className: name, reason: "the name is an alias of class '\(aliased.name)'"))
                }
                Runtime.state.classesByName[key] = self
            }
            let size = superclass?.instanceSize ?? sf_object_header_size()
            let root = superclass?.rootClass.metaclass ?? meta
            sf_class_init(raw, meta.raw, superclass?.raw, key.cStringCopy(), size,
                          hidden ? UInt32(SF_CLASS_HIDDEN) : 0, ObjectWord(unretained: self).pointer)
            meta._instanceClass = self
            // A root metaclass inherits from its root class, as in Objective-C.
            let metaSuper = superclass?.metaclass ?? self
            sf_class_init(meta.raw, root.raw, metaSuper.raw, key.cStringCopy(), sf_class_struct_size(),
                          UInt32(SF_CLASS_META) | (hidden ? UInt32(SF_CLASS_HIDDEN) : 0),
                          ObjectWord(unretained: meta).pointer)
            meta.setSuperclassLinkage(metaSuper)
            superclass?.subclasses.append(self)
            metaSuper.subclasses.append(meta)
            objectIvarOffsets = superclass?.objectIvarOffsets ?? []
            weakIvarOffsets = superclass?.weakIvarOffsets ?? []
            instanceAlignment = superclass?.instanceAlignment ?? 16
        }
    }

    /// For a metaclass: where class method lookup continues (lock held to change it).
    var metaSuperclass: RuntimeClass?

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
        ObjectWord<RuntimeClass>(sf_class_swift(raw)).object
    }

    /// Makes the class usable: instances can be created and its layout is fixed. Hooks waiting
    /// for its name (`hook(whenRegistered:_:_:options:expecting:_:)`) are installed before this
    /// returns, and before any other thread can find the class or make an instance of it.
    public func register() {
        var failedHooks: [HookRegistry.Body] = []
        // A failed hook's body may capture anything: it is released after the lock.
        defer { withExtendedLifetime(failedHooks) {} }
        Runtime.state.lock.withLock {
            let first = !isRegistered
            isRegistered = true
            metaclass.isRegistered = true
            sf_class_set_info(raw, sf_class_info(raw) | UInt32(SF_CLASS_REGISTERED))
            // Every lookup by name and every instance creation takes this lock: installing in
            // the same hold means none of them sees the class without its hooks.
            if first, !isHidden, !isDisposed {
                failedHooks = HookRegistry.installPending(named: NameKey(cString: sf_class_getName(raw)), on: self)
            }
        }
    }


    deinit {
        raw.deallocate()
    }

    // MARK: - Identity

    /// Whether the two are the same (identity, not contents).
    public static func == (a: RuntimeClass, b: RuntimeClass) -> Bool { a === b }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// A readable form, for logs and test failures.
    public var description: String { isMetaclass ? "<metaclass \(name)>" : "<class \(name)>" }
}
