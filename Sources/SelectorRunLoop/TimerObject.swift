import DynamicRuntime

/// The runtime object a ``SelectorTimer`` passes to its method, so that the method can send
/// `invalidate`, `fire`, `isValid`, `userInfo` and `timeInterval` to it, as to an `NSTimer`.
enum TimerObject {
    private final class Box: @unchecked Sendable {
        weak var timer: SelectorTimer?
    }

    private static let key = AssociationKey("SelectorTimer")

    static let timerClass: RuntimeClass = {
        if let existing = RuntimeClass.named("SFSelectorTimer") { return existing }
        do {
            let cls = try RuntimeClass(name: "SFSelectorTimer")
            try cls.addMethod("invalidate") { (recv: ObjectRef) in timer(of: recv)?.invalidate() }
            try cls.addMethod("fire") { (recv: ObjectRef) in timer(of: recv)?.fire() }
            try cls.addMethod("isValid") { (recv: ObjectRef) -> Bool in timer(of: recv)?.isValid ?? false }
            try cls.addMethod("userInfo") { (recv: ObjectRef) -> Object? in timer(of: recv)?.userInfo as? Object }
            try cls.addMethod("timeInterval") { (recv: ObjectRef) -> Double in timer(of: recv)?.timeInterval ?? 0 }
            return cls
        } catch {
            fatalError("SelectorRunLoop: cannot define SFSelectorTimer: \(error)") // fixed, valid definitions
        }
    }()

    static func make() -> Object {
        do { return try timerClass.createInstance() } catch { fatalError("SelectorRunLoop: \(error)") }
    }

    static func attach(_ timer: SelectorTimer, to object: Object) {
        let box = Box()
        box.timer = timer
        object.setAssociatedValue(box, for: key)
    }

    static func timer(of object: ObjectRef) -> SelectorTimer? {
        (object.associatedValue(for: key) as? Box)?.timer
    }
}

/// The weak proxy class of weak-target timers.
enum WeakProxyClass {
    static let proxyClass: RuntimeClass = {
        if let existing = RuntimeClass.named("SFWeakTimerProxy") { return existing }
        do { return try Proxy.makeWeakClass(name: "SFWeakTimerProxy") } catch { fatalError("SelectorRunLoop: \(error)") }
    }()

    static func make(wrapping target: ObjectRef) -> Object {
        do { return try Proxy.createWeak(proxyClass, wrapping: target) } catch { fatalError("SelectorRunLoop: \(error)") }
    }
}
