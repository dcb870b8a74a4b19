import CDynamicRuntime

/// The C API's hook tokens: a number per installed hook, removed once.
enum CHooks {
    static let tokens = Locked<[UInt64: HookToken]>([:])

    /// The position and whether the hook removes itself after its first call.
    static func options(_ p: sf_hook_position, className: String, selector: String) throws(RuntimeError) -> (HookPosition, HookOptions) {
        let once = p.rawValue & SF_HOOK_AUTOMATIC_REMOVAL.rawValue != 0
        let position = try position(sf_hook_position(p.rawValue & ~SF_HOOK_AUTOMATIC_REMOVAL.rawValue),
                                    className: className, selector: selector)
        return (position, once ? .removeAfterFirstCall : [])
    }

    static func position(_ p: sf_hook_position, className: String, selector: String) throws(RuntimeError) -> HookPosition {
        switch p {
        case SF_HOOK_BEFORE: return .before
        case SF_HOOK_INSTEAD: return .instead
        case SF_HOOK_AFTER: return .after
        default:
            throw .invalidArgument(.init(className: className, selector: selector, expected: "SF_HOOK_BEFORE, SF_HOOK_INSTEAD or SF_HOOK_AFTER", actual: "hook position \(p.rawValue)"))
        }
    }

    /// A C callback as the chains call it (`native`), and as a hook body closure making the
    /// same call: an entry's `body` is not optional, and what reads only it still runs the hook.
    static func body(_ fn: @escaping sf_hook_fn, _ context: UnsafeMutableRawPointer?) -> (HookRegistry.Body, NativeHookBody) {
        let native = NativeHookBody(function: fn, context: context)
        return ({ (h: HookContext) throws in try native.run(h) }, native)
    }

    /// Drops the C token of a hook that removed itself.
    static func forget(_ id: UInt64) {
        _ = tokens.withLock { $0.removeValue(forKey: id) }
    }

    static func install(_ make: () throws(RuntimeError) -> HookToken) -> sf_hook_token {
        capi(0) { () throws(RuntimeError) in
            let token = try make()
            tokens.withLock { $0[token.id] = token }
            return token.id
        }
    }
}

/// A C hook's function and context. The chains call it directly where they would call the
/// hook's closure (an instead-only chain's first hook, an entry of the general loop): one
/// indirect call and a closure context fewer per hooked call.
struct NativeHookBody: @unchecked Sendable {
    let function: sf_hook_fn
    let context: UnsafeMutableRawPointer?

    // Inlined into the chain's call: its error is built out of line, so the frame is the
    // CCall's six words.
    @inline(__always)
    func run(_ h: HookContext) throws(RuntimeError) {
        var call = CCall(hook: h)
        sf_clear_last_error()
        let status = CCall.run(&call) { function($0, context) }
        if _slowPath(status != SF_OK) { try Self.failed(call, status) }
    }

    /// Out of line: the error's construction would give every call a frame for it.
    @inline(never)
    private static func failed(_ call: CCall, _ status: sf_status) throws(RuntimeError) -> Never {
        throw call.callbackFailed(status, what: "the C hook")
    }
}

/// The C function `sf_class_hookMethod` of SelectorForwarding.h.
@_cdecl("sf_class_hookMethod")
@_spi(CAPI) public func sf_class_hookMethod_impl(_ cls: sf_class_t?, _ sel: sf_sel?, _ position: sf_hook_position,
                                                _ types: UnsafePointer<CChar>?, _ fn: sf_hook_fn?,
                                                _ context: UnsafeMutableRawPointer?) -> sf_hook_token {
    CHooks.install { () throws(RuntimeError) in
        let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
        let s = Selector(raw: try CAPIValues.nonNull(sel, "selector", className: c.name))
        let fn = try CAPIValues.nonNull(fn, "hook function", className: c.name, selector: s.name)
        let (p, options) = try CHooks.options(position, className: c.name, selector: s.name)
        let (body, native) = CHooks.body(fn, context)
        return try HookRegistry.add(on: c, s, p, expecting: types.map { String(cString: $0) },
                                    once: options.contains(.removeAfterFirstCall), native: native, body)
    }
}

/// The C function `sf_object_hookMethod` of SelectorForwarding.h.
@_cdecl("sf_object_hookMethod")
@_spi(CAPI) public func sf_object_hookMethod_impl(_ obj: sf_id?, _ sel: sf_sel?, _ position: sf_hook_position,
                                                 _ types: UnsafePointer<CChar>?, _ fn: sf_hook_fn?,
                                                 _ context: UnsafeMutableRawPointer?) -> sf_hook_token {
    CHooks.install { () throws(RuntimeError) in
        let o = try CAPIValues.nonNull(obj, "object")
        let name = CAPIValues.className(of: o)
        let s = Selector(raw: try CAPIValues.nonNull(sel, "selector", className: name))
        let fn = try CAPIValues.nonNull(fn, "hook function", className: name, selector: s.name)
        let (p, options) = try CHooks.options(position, className: name, selector: s.name)
        let (body, native) = CHooks.body(fn, context)
        return try HookRegistry.addObjectHook(o, s, p, expecting: types.map { String(cString: $0) },
                                              once: options.contains(.removeAfterFirstCall), native: native, body)
    }
}

/// The C function `sf_hook_remove` of SelectorForwarding.h.
@_cdecl("sf_hook_remove")
@_spi(CAPI) public func sf_hook_remove_impl(_ token: sf_hook_token) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        guard let t = CHooks.tokens.withLock({ $0.removeValue(forKey: token) }) else {
            throw .invalidArgument(.init(expected: "an installed hook token", actual: "token \(token) (removed already, or never issued)"))
        }
        guard t.remove() else {
            throw .hookFailed(.init(className: t.hook.cls.visibleName, selector: t.hook.selector.name, reason: "hook token \(token) was already uninstalled (its object or class went away)"))
        }
    }
}

/// The C function `sf_hook_isActive` of SelectorForwarding.h.
@_cdecl("sf_hook_isActive")
@_spi(CAPI) public func sf_hook_isActive_impl(_ token: sf_hook_token) -> Bool {
    CHooks.tokens.withLock { $0[token] }?.isActive ?? false
}

/// The C API's pending hooks: caller-owned handles to `PendingHook`s.
enum CPendingHooks {
    static let table = CHandleTable<PendingHook>(kind: "pending hook")

    /// Files an installed hook's token where `sf_hook_remove` and `sf_hook_isActive` find it.
    /// Runs under the runtime lock: the token table's lock is a leaf.
    static let fileToken: @Sendable (HookToken) -> Void = { token in CHooks.tokens.withLock { $0[token.id] = token } }
}

/// The C function `sf_hook_whenAvailable` of SelectorForwarding.h.
@_cdecl("sf_hook_whenAvailable")
@_spi(CAPI) public func sf_hook_whenAvailable_impl(_ className: UnsafePointer<CChar>?, _ sel: sf_sel?, _ position: sf_hook_position,
                                                  _ types: UnsafePointer<CChar>?, _ fn: sf_hook_fn?,
                                                  _ context: UnsafeMutableRawPointer?) -> sf_pending_hook_t? {
    capi(nil) { () throws(RuntimeError) in
        let key = NameKey(cString: try CAPIValues.nonNull(className, "class name"))
        let name = key.displayName
        let s = Selector(raw: try CAPIValues.nonNull(sel, "selector", className: name))
        let fn = try CAPIValues.nonNull(fn, "hook function", className: name, selector: s.name)
        let (p, options) = try CHooks.options(position, className: name, selector: s.name)
        let (body, native) = CHooks.body(fn, context)
        let pending = try HookRegistry.addPending(key: key, s, p, options: options, expecting: types.map { String(cString: $0) },
                                                  native: native, body, onInstall: CPendingHooks.fileToken)
        return CPendingHooks.table.insert(pending)
    }
}

/// The C function `sf_pending_hook_getState` of SelectorForwarding.h.
@_cdecl("sf_pending_hook_getState")
@_spi(CAPI) public func sf_pending_hook_getState_impl(_ hook: sf_pending_hook_t?) -> sf_pending_hook_state {
    let pending: PendingHook
    do { pending = try CPendingHooks.table.lookup(hook) } catch { return fail(error, SF_PENDING_HOOK_INVALID) }
    switch pending.state {
    case .waiting: succeed(); return SF_PENDING_HOOK_WAITING
    case .installed: succeed(); return SF_PENDING_HOOK_INSTALLED
    case let .failed(error): return fail(error, SF_PENDING_HOOK_FAILED)
    case .removed: succeed(); return SF_PENDING_HOOK_REMOVED
    }
}

/// The C function `sf_pending_hook_getToken` of SelectorForwarding.h.
@_cdecl("sf_pending_hook_getToken")
@_spi(CAPI) public func sf_pending_hook_getToken_impl(_ hook: sf_pending_hook_t?) -> sf_hook_token {
    capi(0) { () throws(RuntimeError) in
        let pending = try CPendingHooks.table.lookup(hook)
        switch pending.state {
        case let .installed(token): return token.id
        case let .failed(error): throw error
        case .waiting:
            throw .hookFailed(.init(className: pending.className, selector: pending.selector.name, reason: "no class of that name is registered yet"))
        case .removed:
            throw .hookFailed(.init(className: pending.className, selector: pending.selector.name, reason: "the pending hook was removed"))
        }
    }
}

/// The C function `sf_pending_hook_remove` of SelectorForwarding.h.
@_cdecl("sf_pending_hook_remove")
@_spi(CAPI) public func sf_pending_hook_remove_impl(_ hook: sf_pending_hook_t?) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        // The token goes from the C table too, as sf_hook_remove would take it.
        if let token = try CPendingHooks.table.lookup(hook).take().token { CHooks.forget(token.id) }
    }
}

/// The C function `sf_pending_hook_release` of SelectorForwarding.h.
@_cdecl("sf_pending_hook_release")
@_spi(CAPI) public func sf_pending_hook_release_impl(_ hook: sf_pending_hook_t?) -> sf_status {
    capiStatus { () throws(RuntimeError) in try CPendingHooks.table.release(hook) }
}
