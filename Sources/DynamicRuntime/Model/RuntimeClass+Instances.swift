import CDynamicRuntime
import Glibc

extension RuntimeClass {
    /// Creates an instance with zeroed ivars; the returned handle owns it.
    ///
    /// - Throws: `classNotRegistered` before `register()`, `invalidArgument` for a metaclass.
    public func createInstance() throws(RuntimeError) -> Object {
        guard !isMetaclass else {
            throw .invalidArgument(.init(className: name, operation: "create an instance", expected: "a class", actual: "a metaclass"))
        }
        guard Runtime.state.lock.withLock({ isRegistered && !isDisposed }) else {
            throw .classNotRegistered(.init(className: name, operation: "create an instance"))
        }
        // Creating an instance plays `+alloc`'s part: the class's first message.
        try ensureInitialized()
        return Object(adopting: ObjectLifecycle.allocate(self))
    }
}
