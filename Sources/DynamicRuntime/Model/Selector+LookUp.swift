import CDynamicRuntime

extension Selector {
    /// The selector with that name if one is registered, without registering it
    /// (`sel_lookUpByName`): nil for a name no one has used.
    public static func lookUp(_ name: String) -> Selector? {
        SelectorTable.shared.lookup(name).map { Selector(raw: $0) }
    }
}

extension RuntimeClass {
    /// The class method `selector` (a method of the metaclass), inherited or own
    /// (`class_getClassMethod`).
    public func classMethod(for selector: Selector) -> Method? {
        metaclass.method(for: selector)
    }
}
