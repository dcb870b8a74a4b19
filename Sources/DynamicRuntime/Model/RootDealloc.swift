import CDynamicRuntime
import Glibc
import Synchronization

/// `-dealloc` as an ordinary, overridable method. Every class chain ends in the runtime's root
/// `dealloc` (NSObject's part in objc4): a lookup of `dealloc` that finds no class's own
/// method finds the root's, so an override calls `[super dealloc]` with the super-send API
/// and hooks wrap `dealloc` like any inherited method. The root `dealloc` destructs the object
/// (`ObjectLifecycle.destruct`); the free comes after the whole chain returned.
///
/// What a dealloc chain gets wrong is finished, not trusted: a chain that returns without
/// reaching the root (no `[super dealloc]`, or a body that threw first) has the runtime run the
/// root's work itself; a second `[super dealloc]`, or `dealloc` sent to an object whose last
/// release has not happened, is refused with an error. Either way the object is destructed and
/// freed exactly once. Errors a chain leaves with nobody to throw to are reported on stderr.
enum RootDealloc {
    static let selector = Selector("dealloc")
    static let encoding = "v@:"

    /// The root `dealloc`'s IMP.
    static let function: @convention(c) (sf_id?, sf_sel?) -> Void = { obj, _ in
        guard let obj else { return }
        RootDealloc.run(obj)
    }
    static var imp: sf_imp { CFunction.cast(function, to: sf_imp.self) }

    /// The record a lookup of `dealloc` finds when no class in the chain has its own. Its class
    /// is the runtime's own, hidden root class, which never has instances. Made before the first
    /// class (`RuntimeClass.init`), outside the runtime lock that lookups hold.
    static let record: MethodRecord = {
        let owner = try! RuntimeClass(unregisteredName: "SFRootObject", superclass: nil, hidden: true)
        return MethodRecord(selector: selector, signature: try! Signature(encoding), imp: IMP(imp), in: owner)
    }()

    /// Errors reported on stderr so far (tests read it).
    static let reported = Atomic<Int>(0)

    /// Runs the `dealloc` chain of an object whose last release just happened, and makes sure
    /// the root's work ran once.
    static func runChain(_ obj: sf_id) {
        sf_rcu_enter()
        let found = sf_lookup_method(sf_object_isa(obj), selector.raw).flatMap { sf_method_imp($0) }
        sf_rcu_exit()
        guard let found, CFunction.address(of: found) != CFunction.address(of: imp) else {
            ObjectLifecycle.destruct(obj)
            return
        }
        let className = RuntimeClass.from(sf_object_getClass(obj)!).name
        // An error pending for a send around this release is not the chain's: set aside.
        let outer = sf_take_pending_error()
        let previous = sf_dealloc_current()
        sf_dealloc_set_current(UnsafeMutableRawPointer(obj))
        sf_rcu_enter()
        CFunction.cast(found, to: (@convention(c) (sf_id?, sf_sel?) -> Void).self)(obj, selector.raw)
        sf_rcu_exit()
        let reachedRoot = sf_dealloc_current() == nil
        sf_dealloc_set_current(previous)
        let thrown = sf_take_pending_error().map(PendingError.unbox)
        if let outer { sf_set_pending_error(outer) }
        if let thrown { report("-[\(className) dealloc] threw: \(thrown)") }
        if !reachedRoot {
            report("-[\(className) dealloc] returned without calling [super dealloc]; the runtime finished the teardown")
            ObjectLifecycle.destruct(obj)
        }
    }

    /// The root `dealloc` itself: destructs `obj` if it is the object whose chain runs on this
    /// thread and the root has not run for it yet.
    static func run(_ obj: sf_id) {
        if sf_dealloc_current() == UnsafeMutableRawPointer(obj) {
            sf_dealloc_set_current(nil)
            ObjectLifecycle.destruct(obj)
            return
        }
        let className = sf_object_getClass(obj).map { String(cString: sf_class_getName($0)) }
        let error = RuntimeError.invalidArgument(.init(
            className: className, selector: selector.name, operation: "the root dealloc",
            expected: "the object whose last release is running its dealloc, once",
            actual: ObjectLifecycle.isDeallocating(obj) ? "a second [super dealloc]" : "a live object (release it instead)"))
        Runtime.raise(error)
        error.record()
    }

    private static func report(_ message: String) {
        reported.add(1, ordering: .relaxed)
        let line = "SelectorForwarding: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
