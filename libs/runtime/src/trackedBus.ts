import type { BatchConsumerOptions, Bus, ConsumerOptions, EndpointBinding, EventMessageOf, PublishOptions, RequestOptions, ServedEndpoints, ServiceInfo, Stoppable } from "@sched/bus";
import type { Endpoint, EventDef, HttpReply, NoticeDef, PayloadOf, ReplyOf, RequestOf, RouteEndpoint } from "@sched/proto";

/** A stop that runs once: a service stopping what the runtime already stopped waits for the same result. */
function once<S extends Stoppable>(stoppable: S): S {
  let stopping: Promise<void> | undefined;
  return { ...stoppable, stop: () => (stopping ??= stoppable.stop()) };
}

/**
 * The bus as a service module sees it, remembering what the module serves and
 * consumes, so shutdown stops those in the right order whatever order the
 * module's own stop() uses: first no new requests (finishing those taken),
 * then no new events, then the module's stop, then the connection.
 */
export class TrackedBus implements Bus {
  private readonly served: ServedEndpoints[] = [];
  private readonly consumers: Stoppable[] = [];

  constructor(private readonly inner: Bus) {}

  /** True while every endpoint the module serves is still served (readiness asks; a stopped endpoint turns it false). */
  isServing(): boolean {
    return this.served.every((s) => s.isServing());
  }

  /** Stops serving every endpoint; resolves when the requests already taken are answered. */
  async stopServing(): Promise<void> {
    await Promise.allSettled(this.served.map((s) => s.stop()));
  }

  /** Stops every consumer; resolves when the event in hand is settled. */
  async stopConsuming(): Promise<void> {
    await Promise.allSettled(this.consumers.map((c) => c.stop()));
  }

  request<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, options?: RequestOptions): Promise<ReplyOf<E>> {
    return this.inner.request(endpoint, payload, options);
  }

  forward(endpoint: RouteEndpoint, payload: RequestOf<RouteEndpoint>, options?: RequestOptions): Promise<HttpReply> {
    return this.inner.forward(endpoint, payload, options);
  }

  async serve(service: ServiceInfo, bindings: EndpointBinding[]): Promise<ServedEndpoints> {
    const handle = once(await this.inner.serve(service, bindings));
    this.served.push(handle);
    return handle;
  }

  publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: PublishOptions): Promise<void> {
    return this.inner.publish(event, payload, options);
  }

  publishStored<E extends EventDef>(event: E, json: string, options: PublishOptions): Promise<void> {
    return this.inner.publishStored(event, json, options);
  }

  async consume<E extends EventDef>(options: ConsumerOptions<E>, handler: (message: EventMessageOf<E>) => Promise<void>): Promise<Stoppable> {
    const handle = once(await this.inner.consume(options, handler));
    this.consumers.push(handle);
    return handle;
  }

  async consumeBatches<E extends EventDef>(options: BatchConsumerOptions<E>, handler: (messages: EventMessageOf<E>[]) => Promise<void>): Promise<Stoppable> {
    const handle = once(await this.inner.consumeBatches(options, handler));
    this.consumers.push(handle);
    return handle;
  }

  notify<N extends NoticeDef>(notice: N, payload: PayloadOf<N>): Promise<void> {
    return this.inner.notify(notice, payload);
  }

  onNotice<N extends NoticeDef>(notice: N, handler: (payload: PayloadOf<N>) => void): Promise<Stoppable> {
    return this.inner.onNotice(notice, handler);
  }

  isConnected(): boolean {
    return this.inner.isConnected();
  }

  maxMessageBytes(): number | undefined {
    return this.inner.maxMessageBytes();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
