import CShims

/// What happens when lookup finds no method. The full Objective-C forwarding path plugs in
/// here; until a stage handles the message, the answer is doesNotRecognizeSelector.
enum Forwarding {
    /// Handles a miss for a frame laid out by `signature`; returns the signature whose return
    /// type now sits in `returnValue`.
    @discardableResult
    static func handleMiss(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, signature: Signature,
                           arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                           returnValue: UnsafeMutableRawPointer) throws(RuntimeError) -> Signature {
        throw unrecognized(cls, selector)
    }

    static func unrecognized(_ cls: sf_class_t, _ selector: Selector) -> RuntimeError {
        let c = RuntimeClass.from(cls)
        let visible = c.isHidden ? (c.superclass ?? c) : c
        return .doesNotRecognizeSelector(className: visible.name, selector: selector.name, isClassMethod: c.isMetaclass)
    }
}

extension Forwarding {
    /// A miss from `sf_msg_send`: the frame's types are unknown until a forwarding stage
    /// supplies a signature.
    static func handleMissFromC(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                returnValue: UnsafeMutableRawPointer?) throws(RuntimeError) {
        throw unrecognized(cls, selector)
    }
}
