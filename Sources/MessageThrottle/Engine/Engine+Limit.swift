import DynamicRuntime

extension MessageReceiver {
    /// Limits `selector` on this receiver — an object, a class (its instances) or a metaclass
    /// (its class methods) — to once per `duration` in `mode`, and returns the applied rule.
    ///
    /// ```swift
    /// let rule = try button.limit("tap:", oncePer: .milliseconds(300), mode: .firstly)
    /// ```
    @discardableResult
    public func limit(_ selector: Selector, oncePer duration: Duration, mode: ThrottleMode = .default,
                      executor: (any ThrottleExecutor)? = nil, in engine: Engine = .shared) throws(ThrottleError) -> Rule {
        let rule = Rule(target: self, selector: selector, duration: duration, mode: mode, executor: executor)
        try engine.apply(rule)
        return rule
    }
}

extension Engine {
    /// Limits the instance method `selector` of the class named `className`.
    @discardableResult
    public func limit(className: String, _ selector: Selector, oncePer duration: Duration,
                      mode: ThrottleMode = .default, classMethod: Bool = false) throws(ThrottleError) -> Rule {
        guard let cls = RuntimeClass.named(className) else {
            throw .runtime(.invalidArgument(.init(className: className, selector: selector.name, expected: "a registered class", actual: "no class named '\(className)'")))
        }
        let rule = Rule(target: classMethod ? cls.metaclass : cls, selector: selector, duration: duration, mode: mode)
        try apply(rule)
        return rule
    }
}
