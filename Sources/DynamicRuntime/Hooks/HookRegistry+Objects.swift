import CDynamicRuntime

/// Per-object hooks without a class per object: every instance of a class that has hooks of its
/// own shares one hidden subclass, whose hooked entries run the receiver's own chain (from its
/// side table) merged with the class's. See docs/architecture.md.
extension HookRegistry {
    /// Adds a hook of `obj`'s own: it runs for this object only, merged with its class's hooks.
    /// `objectGone` runs once if `obj` is deallocated with the hook still installed, after the
    /// hook's last call, outside every lock.
    static func addObjectHook(_ obj: sf_id, _ selector: Selector, _ position: HookPosition, expecting types: String?,
                              once: Bool = false, objectGone: (@Sendable () -> Void)? = nil,
                              native: NativeHookBody? = nil, _ body: @escaping Body) throws(RuntimeError) -> HookToken {
        _ = installDeallocHandler
        let visible = RuntimeClass.from(sf_object_getClass(obj)!)
        guard !sf_object_isTagged(obj) else {
            throw .hookFailed(.init(className: visible.name, selector: selector.name, expected: "an allocated object", actual: "a small (tagged) object, which has no storage for hooks of its own (hook its class)"))
        }
        guard sf_object_flags(obj) & UInt32(SF_OBJ_IMMORTAL) == 0 else {
            throw .hookFailed(.init(className: visible.name, selector: selector.name, expected: "an instance", actual: "a class object (hook the metaclass for class methods)"))
        }
        try checkHookable(selector, className: visible.name)
        let expected = try types.map { (t: String) throws(RuntimeError) -> Signature in try Signature(t) }
        let hidden = try objectHookClass(of: visible)
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> HookToken in
            guard sf_object_flags(obj) & UInt32(SF_OBJ_DEALLOCATING) == 0 else {
                throw .hookFailed(.init(className: visible.name, selector: selector.name, expected: "a live object", actual: "an object being deallocated"))
            }
            let isa = sf_object_isa(obj)!
            guard isa == visible.raw || isa == hidden.raw else {
                throw .hookFailed(.init(className: visible.name, selector: selector.name, reason: "the object's class changed meanwhile"))
            }
            let method = try hookedMethod(hidden, selector, visibleName: visible.name, expecting: expected)
            let hook = try installedHook(hidden, method)
            // Under the runtime lock: never a table being dropped (dropping takes this lock).
            let side = ObjectSideTable.of(obj, create: true)!
            let id = nextID
            nextID += 1
            let entry = HookChain.Entry(id: id, body: body, native: native, once: once ? OnceClaim() : nil)
            let head = side.hooks
            let existing = ObjectHookList.chain(head, selector.raw)
            if existing == nil { hook.objectUsers += 1 }
            let chain = existing ?? HookChain.empty()
            guard chain.hasRoom(at: position) else {
                throw .hookFailed(.init(className: visible.name, selector: selector.name, operation: "add a hook",
                                        expected: "at most \(HookChain.capacity) hooks at one position", actual: "\(HookChain.capacity + 1)"))
            }
            let changed = chain.adding(entry, at: position)
            side.publishHooks(ObjectHookList.replacing(head, selector.raw, with: changed))
            side.hookedObject = obj
            // After the chain: a sender that sees the hidden class finds the object's hooks.
            if isa != hidden.raw { sf_object_set_isa(obj, hidden.raw) }
            let token = HookToken(id: id, hook: hook, position: position, side: side)
            if once { oneShotTokens[id] = token }
            if let objectGone { objectGoneHandlers[id] = objectGone }
            return token
        }
    }

    /// The hidden subclass `visible`'s instances with hooks of their own share, made on first use.
    static func objectHookClass(of visible: RuntimeClass) throws(RuntimeError) -> RuntimeClass {
        if let existing = Runtime.state.lock.withLock({ visible.objectHookClass }) { return existing }
        let made = try RuntimeClass(unregisteredName: "\(visible.name)#hooked", superclass: visible, hidden: true)
        made.register()
        let winner = Runtime.state.lock.withLock { () -> RuntimeClass in
            if let raced = visible.objectHookClass { return raced }
            visible.objectHookClass = made
            return made
        }
        if winner !== made { try? made.dispose() }
        return winner
    }

    /// Moves an object with hooks of its own from the hidden class `from` to `to` (the hidden
    /// subclass of the class it is being switched to): `to` gets an entry for each hooked
    /// selector before the isa changes, `from` gives its up after, so no send misses the
    /// object's hooks (lock held). Refused, with nothing changed, when the new class lacks a
    /// hooked method or has it with other types.
    static func moveObjectHooks(_ obj: sf_id, from: RuntimeClass, to: RuntimeClass,
                                _ refuse: (String) -> RuntimeError) throws(RuntimeError) {
        Runtime.state.lock.assertHeld()
        let selectors = ObjectHookList.chains(ObjectSideTable.of(obj, create: false)?.hooks).map { Selector(raw: $0.selector!) }
        var methods: [MethodRecord] = []
        for s in selectors {
            guard let method = to.findMethod(s) else { throw refuse("the object has hooks of its own on \(s.name), which it does not implement") }
            if let hooked = from.methods[s]?.hook, !hooked.signature.isCompatible(with: method.signature) {
                throw refuse("the object has hooks of its own on \(s.name) (\(hooked.signature.encoding)); it implements \(method.signature.encoding)")
            }
            methods.append(method)
        }
        var installed: [MethodHook] = []
        do throws(RuntimeError) {
            for m in methods {
                let hook = try installedHook(to, m)
                hook.objectUsers += 1
                installed.append(hook)
            }
        } catch {
            for s in selectors.prefix(installed.count) { release(to, s) }
            throw error
        }
        sf_object_set_isa(obj, to.raw)
        for s in selectors { release(from, s) }
    }

    /// Removes hook `id` from the object whose side table is `side`; the object gets its exact
    /// class back when its last hook goes.
    static func removeObjectHook(_ side: ObjectSideTable, _ id: UInt64) -> Bool {
        let (removed, oneShot, gone) = Runtime.state.lock.withLock { () -> (Bool, HookToken?, (@Sendable () -> Void)?) in
            let oneShot = oneShotTokens.removeValue(forKey: id)
            let gone = objectGoneHandlers.removeValue(forKey: id)
            guard let obj = side.hookedObject, let head = side.hooks,
                  let chain = ObjectHookList.chain(head, containing: id) else { return (false, oneShot, gone) }
            let rest = chain.removing(id)
            let newHead = ObjectHookList.replacing(head, chain.selector!, with: rest.isEmpty ? nil : rest)
            side.publishHooks(newHead)
            if rest.isEmpty { release(RuntimeClass.from(sf_object_isa(obj)), Selector(raw: chain.selector!)) }
            if newHead == nil {
                side.hookedObject = nil
                // The table goes with the last hook unless something else needs it; before the
                // isa, the last access to the object: a dealloc that saw the hidden class waits
                // for this lock, one that sees the visible class may free the object.
                ObjectSideTable.dropIfUnused(obj)
                sf_object_set_isa(obj, sf_object_getClass(obj))
            }
            return (true, oneShot, gone)
        }
        // Dropped after the last access to the object: their captures may own it.
        withExtendedLifetime((oneShot, gone)) {}
        Runtime.state.collectGarbage()
        return removed
    }

    /// Removes `obj`'s own hook `id`.
    static func removeObjectHook(_ obj: sf_id, _ id: UInt64) -> Bool {
        guard let side = ObjectSideTable.of(obj, create: false) else { return false }
        return removeObjectHook(side, id)
    }

    /// Whether hook `id` is still one of the object's (`side`'s).
    static func isActive(_ side: ObjectSideTable, _ id: UInt64) -> Bool {
        Runtime.state.lock.withLock { side.hookedObject != nil && ObjectHookList.chain(side.hooks, containing: id) != nil }
    }

    /// `obj`'s own hooks on `selector` (every selector when nil), by selector name.
    static func objectHooks(_ obj: sf_id, _ selector: Selector?) -> [HookDescription] {
        guard let side = ObjectSideTable.of(obj, create: false) else { return [] }
        return Runtime.state.lock.withLock {
            ObjectHookList.chains(side.hooks)
                .filter { selector == nil || $0.selector == selector!.raw }
                .map { (Selector(raw: $0.selector!), $0) }
                .sorted { $0.0.name < $1.0.name }
                .flatMap { $0.1.descriptions($0.0) }
        }
    }

    /// One object fewer has hooks of its own on `selector`: the hidden class's entry goes with
    /// the last (lock held).
    private static func release(_ hidden: RuntimeClass, _ selector: Selector) {
        Runtime.state.lock.assertHeld()
        guard let hook = hidden.methods[selector]?.hook else { return }
        hook.objectUsers -= 1
        if hook.objectUsers == 0 { uninstall(hook) }
    }

    /// The object is going (its isa is its class again): drop its hooks, then run what waits
    /// for its end. No hook of its can run any more, so a stream ends after its last message.
    static func objectDeallocated(_ obj: sf_id, _ hidden: RuntimeClass) {
        let (dropped, gone) = Runtime.state.lock.withLock { () -> ([HookToken], [@Sendable () -> Void]) in
            guard let side = ObjectSideTable.of(obj, create: false) else { return ([], []) }
            let chains = ObjectHookList.chains(side.hooks)
            for c in chains { release(hidden, Selector(raw: c.selector!)) }
            let ids = chains.flatMap { $0.listed.map(\.entry.id) }
            side.publishHooks(nil)
            side.hookedObject = nil
            return (ids.compactMap { oneShotTokens.removeValue(forKey: $0) },
                    ids.compactMap { objectGoneHandlers.removeValue(forKey: $0) })
        }
        withExtendedLifetime(dropped) {}
        for handler in gone { handler() }
        Runtime.state.collectGarbage()
    }
}

/// An object's own hooks: a short immutable list of chains, one per selector, linked through
/// `HookChain.next` and replaced whole on every change.
enum ObjectHookList {
    /// The chain for `selector` in the list at `head`.
    @inline(__always)
    static func chain(_ head: HookChain?, _ selector: sf_sel) -> HookChain? {
        var node = head
        while let n = node {
            if n.selector == selector { return n }
            node = n.next
        }
        return nil
    }

    /// The receiver's own chain for `selector`, if it has one, without retaining anything (in a
    /// read section: the list is freed only after a grace period).
    @inline(__always)
    static func chainRef(of receiver: sf_id?, _ selector: sf_sel) -> ObjectWord<HookChain>? {
        guard let receiver, let side = sf_object_side_inline(receiver) else { return nil }
        var node = ObjectWord<ObjectSideTable>(side).withObject { $0.hooksRef }
        while let n = node {
            let (found, next) = n.withObject { c in
                c.withUnsafeMutablePointerToHeader { h in
                    (h.pointee.selector == selector, h.pointee.next.map { ObjectWord(unretained: $0) })
                }
            }
            if found { return n }
            node = next
        }
        return nil
    }

    static func chains(_ head: HookChain?) -> [HookChain] {
        var all: [HookChain] = []
        var node = head
        while let n = node {
            all.append(n)
            node = n.next
        }
        return all
    }

    static func chain(_ head: HookChain?, containing id: UInt64) -> HookChain? {
        chains(head).first { $0.contains(id) }
    }

    /// A new list with `selector`'s chain replaced by `chain` (removed when nil).
    static func replacing(_ head: HookChain?, _ selector: sf_sel, with chain: HookChain?) -> HookChain? {
        var rest = chains(head).filter { $0.selector != selector }
        if let chain { rest.insert(chain, at: 0) }
        var sel: [sf_sel] = rest.map { $0.selector ?? selector }
        if chain != nil { sel[0] = selector }
        var next: HookChain?
        for (c, s) in zip(rest, sel).reversed() { next = c.linked(s, next) }
        return next
    }
}
