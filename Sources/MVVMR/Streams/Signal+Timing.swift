extension Signal {
    /// The latest event once `dueTime` has passed without another: typing settles, then one search.
    /// - Parameters:
    ///   - dueTime: the quiet time that must follow an event.
    ///   - scheduler: the page's scheduler, from its `UnitContext`.
    public func debounce(_ dueTime: Duration, on scheduler: Scheduler) -> Signal<Element> {
        let source = node
        return Signal(connect: { target in
            var pending: Subscription?
            let subscription = source.subscribe { value in
                pending?.dispose()
                pending = scheduler.schedule(after: dueTime) {
                    pending = nil
                    target.emit(value)
                }
            }
            return Subscription {
                subscription.dispose()
                pending?.dispose()
                pending = nil
            }
        })
    }

    /// At most one event per `window`: the first event passes at once, then the window closes; with
    /// `latest`, the last event seen while it was closed is emitted when it reopens.
    /// - Parameters:
    ///   - window: the time after an emitted event during which no other event passes.
    ///   - latest: whether the last event held back is emitted at the end of the window.
    ///   - scheduler: the page's scheduler, from its `UnitContext`.
    public func throttle(_ window: Duration, latest: Bool = true, on scheduler: Scheduler) -> Signal<Element> {
        let source = node
        return Signal(connect: { target in
            var timer: Subscription?
            var heldBack: Element?
            func openWindow() {
                timer = scheduler.schedule(after: window) {
                    timer = nil
                    if let value = heldBack {
                        heldBack = nil
                        openWindow()
                        target.emit(value)
                    }
                }
            }
            let subscription = source.subscribe { value in
                if timer == nil {
                    openWindow()
                    target.emit(value)
                } else if latest {
                    heldBack = value
                }
            }
            return Subscription {
                subscription.dispose()
                timer?.dispose()
                timer = nil
                heldBack = nil
            }
        })
    }
}
