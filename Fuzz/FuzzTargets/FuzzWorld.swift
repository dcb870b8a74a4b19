import CDynamicRuntime
import DynamicRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Classes and objects every input talks to; created once per process.
final class FuzzWorld: @unchecked Sendable {
    static let shared: FuzzWorld = {
        do { return try FuzzWorld() } catch { fatalError("fuzz fixtures: \(error)") }
    }()

    static var liveObjects: Int { Int(sf_counter_objects()) }

    static let selectorNames = [
        "add:to:", "neg:", "half:", "flag:", "narrow:b:c:d:", "name", "echo:", "pt:", "sel:", "cls:", "ptr:", "len:",
        "fail:", "keep:", "wide:b:c:d:e:f:", "make", "nothing", "hooked:", "dyn1", "dyn2:",
        // unknown, wrong arity, reserved
        "missing", "add:", "add:to:extra:", "dealloc", "forwardInvocation:", "methodSignatureForSelector:",
        "forwardingTargetForSelector:", "resolveInstanceMethod:", "doesNotRecognizeSelector:", "",
    ]
    static let returnsObject: Set<String> = ["echo:", "make", "forwardingTargetForSelector:"]
    static let receiverNames = ["calc", "hookedSub", "forwarder", "invoker", "resolver", "proxy", "loop", "Calc(class)", "nil", "temporary", "small"]
    static var receiverCount: Int { receiverNames.count }
    static let temporaryReceiver = 9
    /// A small object (tagged pointer): its class has `add:to:` and forwards the rest to `calc`.
    static let smallReceiver = 10
    /// Tags are process-wide; the test suite's own small-object classes hold others.
    static let smallTag = 7

    static let structShapes: [(TypeEncoding, Int)] = [
        (FPoint.typeEncoding, 16),
        (.structure(name: "S1", fields: [.int8]), 1),
        (.structure(name: "Big", fields: Array(repeating: .int64, count: 8)), 64),
        (.structure(name: "N", fields: [FPoint.typeEncoding, .int32]), 24),
        (.int64, 8),
    ]

    static func size(of t: TypeEncoding) -> Int {
        guard let sig = try? Signature("v@:" + t.encoding) else { return -1 }
        return Int(sf_ffi_type_size(sig.raw.pointee.arg_types[2]!))
    }

    let calc, sub, forwarder, invoker, resolver, proxyClass, loop, small: RuntimeClass
    let smallObject: ObjectRef
    let calcInstance: Object
    let objects: [Object]
    let selectors: [Selector]
    let cStrings: [UnsafePointer<CChar>]
    let buffer: UnsafeMutableRawPointer
    private var hooks: [HookToken] = []

    private init() throws {
        selectors = FuzzWorld.selectorNames.map { (name: String) -> Selector in Selector(name) }
        let texts: [String] = ["", "SFFuzz", "é\u{1}ü", String(repeating: "x", count: 300)]
        cStrings = texts.map { (t: String) -> UnsafePointer<CChar> in UnsafePointer(strdup(t)!) }
        buffer = .allocate(byteCount: 256, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 256)

        calc = try RuntimeClass(name: "SFFuzz.Calc")
        try calc.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a &+ b }
        try calc.addMethod("neg:") { (_: ObjectRef, x: Double) in -x }
        try calc.addMethod("half:") { (_: ObjectRef, x: Float) in x / 2 }
        try calc.addMethod("flag:") { (_: ObjectRef, b: Bool) in !b }
        try calc.addMethod("narrow:b:c:d:") { (_: ObjectRef, a: Int8, b: Int16, c: UInt16, d: UInt8) -> Int32 in
            Int32(a) &+ Int32(b) &+ Int32(c) &+ Int32(d)
        }
        nonisolated(unsafe) let name = cStrings[1]
        try calc.addMethod("name") { (_: ObjectRef) in CString(name) }
        try calc.addMethod("echo:") { (_: ObjectRef, o: ObjectRef) -> Object? in o.retained() }
        try calc.addMethod("pt:") { (_: ObjectRef, p: FPoint) in FPoint(x: p.y, y: p.x) }
        try calc.addMethod("sel:") { (_: ObjectRef, s: Selector) in s }
        try calc.addMethod("cls:") { (_: ObjectRef, c: ClassRef) in c }
        // No Optional pointer conformance exists: a raw body passes NULL through untouched.
        try calc.addMethod("ptr:", types: "^v@:^v") { ret, args in ret.copyMemory(from: args[2]!, byteCount: 8) }
        try calc.addMethod("len:") { (_: ObjectRef, s: CString) -> Int in
            guard let p = s.pointer else { return -1 }
            return Int(strlen(p))
        }
        struct Odd: Error {}
        try calc.addMethod("fail:") { (_: ObjectRef, n: Int) throws -> Int in
            if n & 1 == 1 { throw Odd() }
            return n
        }
        try calc.addMethod("keep:") { (_: ObjectRef, o: Object) -> Int in o.retainCount > 0 ? 1 : 0 }
        try calc.addMethod("wide:b:c:d:e:f:", types: "v@:qqqqqd") { _, _ in }
        try calc.addMethod("nothing") { (_: ObjectRef) in }
        try calc.addMethod("hooked:") { (_: ObjectRef, n: Int) in n }
        let made = calc
        try calc.metaclass.addMethod("make") { (_: ObjectRef) -> Object? in try? made.createInstance() }

        sub = try RuntimeClass(name: "SFFuzz.Sub", superclass: calc)

        forwarder = try RuntimeClass(name: "SFFuzz.Forwarder", ivars: [("other", .object)])
        invoker = try RuntimeClass(name: "SFFuzz.Invoker", ivars: [("other", .object)])
        resolver = try RuntimeClass(name: "SFFuzz.Resolver")
        loop = try RuntimeClass(name: "SFFuzz.Loop")

        calcInstance = try calc.createInstance()
        let subInstance = try sub.createInstance()
        let f = try forwarder.createInstance()
        let i = try invoker.createInstance()
        let r = try resolver.createInstance()
        let l = try loop.createInstance()
        try f.setValue(calcInstance.ref, forIvar: "other")
        try i.setValue(calcInstance.ref, forIvar: "other")

        try forwarder.setForwardingTarget { recv, _ in try recv.value(ofIvar: "other", as: ObjectRef.self) }
        try invoker.setForwardInvocation { inv in
            _ = inv.argumentValues.map(\.description)
            _ = inv.description
            let target = try inv.target.value(ofIvar: "other", as: ObjectRef.self)
            if target.responds(to: inv.selector) { try inv.invoke(target: target) }
        }
        try resolver.setResolveInstanceMethod { cls, sel in
            switch sel.name {
            case "dyn1": try cls.addMethod(sel) { (_: ObjectRef) in 1 }
            case "dyn2:": try cls.addMethod(sel) { (_: ObjectRef, x: Int) in x &* 2 }
            default: return false
            }
            return true
        }
        try loop.setForwardInvocation { inv in try inv.invoke() }

        proxyClass = try Proxy.makeClass(name: "SFFuzz.Proxy") { inv, proceed in
            _ = inv.argumentValues
            try proceed()
        }
        let p = try Proxy.create(proxyClass, wrapping: calcInstance)

        // Hooks that read every argument and the return value.
        hooks.append(try calc.hook("hooked:", .before) { ctx in _ = ctx.argumentValues })
        hooks.append(try calc.hook("hooked:", .after) { ctx in
            _ = ctx.returnValue
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self))
        })
        hooks.append(try subInstance.hook("pt:", .instead) { ctx in
            _ = ctx.argumentValues
            try ctx.proceed()
        })
        hooks.append(try subInstance.hook("add:to:", .after) { ctx in _ = try ctx.returnValue(as: Int.self) })

        objects = [calcInstance, subInstance, f, i, r, p, l]

        small = try RuntimeClass(name: "SFFuzz.Small")
        try small.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a &+ b }
        try small.addMethod("hooked:") { (me: ObjectRef, n: Int) in n &+ Int(me.taggedPayload ?? 0) }
        let forwardee = calcInstance.ref
        try small.setForwardingTarget { _, sel in sel.name == "missing" ? nil : forwardee }
        hooks.append(try small.hook("hooked:", .before) { ctx in _ = ctx.target.taggedPayload })
        try small.registerSmallObjectClass(tag: Self.smallTag)
        smallObject = try ObjectRef.tagged(tag: Self.smallTag, payload: 0x5F)

        // KB-6 workaround: a class whose cache is still the shared empty cache can spin forever
        // in sf_cache_probe while a retired cache is pending. One lookup per class and
        // metaclass gives each its own cache for good (flushes keep the allocation).
        // The forwarding stages also look up the receiver's metaclass, and a hooked object has
        // a hidden class with its own metaclass: warm the whole isa chain of every receiver.
        let probe = Selector("SFFuzz.warmUp")
        var pending = objects.map { sf_object_isa($0.raw) } + [calc.raw, sub.raw, forwarder.raw, invoker.raw, resolver.raw, proxyClass.raw, loop.raw, small.raw]
        var seen = Set<UnsafeMutableRawPointer>()
        while let next = pending.popLast() {
            guard let c = next, seen.insert(UnsafeMutableRawPointer(c)).inserted else { continue }
            // Through the Swift entry point: the C ones (dispatch.c) are compiled with ASan, which
            // reports KB-6's out-of-bounds read of the empty cache on every first lookup.
            _ = sf_class_respondsToSelector(c, probe.raw)
            pending.append(sf_class_getSuperclass(c))
            pending.append(sf_object_isa(sf_class_as_object(c)))
        }
    }

    func receiver(_ index: Int) -> ObjectRef {
        switch index {
        case 0..<objects.count: objects[index].ref
        case 7: calc.receiver
        case Self.smallReceiver: smallObject
        default: .nil
        }
    }

    func implementsForwardInvocation(_ index: Int) -> Bool { [3, 5, 6].contains(index) }

    /// Receivers whose `add:to:` is the fixture's sum (directly, forwarded or proxied).
    func computesSum(_ index: Int, _ selector: Selector) -> Bool {
        selector.name == "add:to:" && [0, 1, 2, 3, 5, 9, 10].contains(index)
    }

    func retainCounts() -> [Int] { objects.map(\.retainCount) }

    func checkDynamicResult(_ call: Call, _ value: DynamicValue) -> String? {
        guard computesSum(call.receiverIndex, call.selector), call.arguments.count == 2,
              let a = call.arguments[0] as? Int, let b = call.arguments[1] as? Int else { return nil }
        return value.intValue == a &+ b ? nil : "\(call): add:to: returned \(value)"
    }
}
