/**
 * The control endpoint's routes, over the in-process control:
 *   GET /volumes, GET /calls[?method=M], DELETE /calls, GET /pools,
 *   PUT /pools/:kind {size, maxVolumeSize?}, GET /faults,
 *   POST /faults {method, code?, message?, times?, latencyMs?, latencyMaxMs?, hang?, notReady?,
 *     omitReady?, after?, lostAnswer?, probability?},
 *   DELETE /faults[?method=M].
 * Errors answer {"error": "..."} with 400 (bad input) or 404 (no such pool or route).
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { ControlError } from "./control_api.ts";
import type { CsiMethod, DriverControlApi } from "./types.ts";

export function controlApp(control: DriverControlApi): Hono {
  const app = new Hono();
  const method = (c: Context): CsiMethod | undefined =>
    c.req.query("method") as CsiMethod | undefined;
  app.get("/volumes", async (c) => c.json(await control.volumes()));
  app.get("/calls", async (c) => c.json(await control.calls(method(c))));
  app.delete("/calls", async (c) => {
    await control.clearCalls();
    return c.body(null, 204);
  });
  app.get("/pools", async (c) => c.json(await control.pools()));
  app.put("/pools/:kind", async (c) => {
    const body = await jsonObject(c);
    const options = body["maxVolumeSize"] === undefined
      ? {}
      : { maxVolumeSize: body["maxVolumeSize"] as number | string | null };
    return c.json(
      await control.resizePool(c.req.param("kind"), body["size"] as number | string, options),
    );
  });
  app.get("/faults", async (c) => c.json(await control.faults()));
  app.post("/faults", async (c) => {
    await control.setFault(await jsonObject(c) as never);
    return c.body(null, 204);
  });
  app.delete("/faults", async (c) => {
    await control.clearFaults(method(c));
    return c.body(null, 204);
  });
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    if (error instanceof ControlError) return c.json({ error: error.message }, error.status);
    return c.json({ error: error.message }, 500);
  });
  return app;
}

async function jsonObject(c: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new ControlError(400, "the request body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ControlError(400, "the request body must be a JSON object");
  }
  return body as Record<string, unknown>;
}
