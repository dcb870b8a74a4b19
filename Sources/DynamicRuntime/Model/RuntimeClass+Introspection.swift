import CDynamicRuntime
import Glibc

extension RuntimeClass {
    /// Whether `other` is this class or one of its superclasses.
    public func isSubclass(of other: RuntimeClass) -> Bool {
        var c: RuntimeClass? = self
        while let k = c {
            if k === other { return true }
            c = k.lookupSuperclass
        }
        return false
    }

    /// Whether instances (for a metaclass: the class) respond to `selector`: a method is found,
    /// or the resolver adds one (it is asked once, as objc4's `class_respondsToSelector` does).
    public func responds(to selector: Selector) -> Bool {
        let found = { () -> Bool in
            sf_rcu_enter()
            defer { sf_rcu_exit() }
            return sf_lookup_method(self.raw, selector.raw) != nil
        }()
        return found || Forwarding.resolveForLookup(raw, selector)
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
}
