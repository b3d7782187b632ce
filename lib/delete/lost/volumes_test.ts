import { deepStrictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../../model/objects.ts";
import { optInClass } from "../../../tests/builders/liveness.ts";
import { nodeLabels } from "../../model/labels.ts";
import { lostNodeVolumes, lostVolumeAction } from "./volumes.ts";

const DRIVER = "hostpath.csi.k8s.io";
const KEY = "topology.hostpath.csi/node";

function pv(name: string, options: {
  node?: string;
  labelled?: boolean;
  phase?: string;
  policy?: string;
  className?: string;
  driver?: string;
}): PersistentVolume {
  const node = options.node ?? "lost";
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      ...(options.labelled === false ? {} : { labels: nodeLabels(DRIVER, node) }),
    },
    spec: {
      csi: { driver: options.driver ?? DRIVER, volumeHandle: `h-${name}` },
      persistentVolumeReclaimPolicy: options.policy ?? "Delete",
      storageClassName: options.className ?? "plain",
      claimRef: { namespace: "ns", name: `claim-${name}`, uid: `cuid-${name}` },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: KEY, operator: "In", values: [node] }] }],
        },
      },
    },
    status: { phase: options.phase ?? "Bound" },
  };
}

Deno.test("lostNodeVolumes: the node's labelled PVs, and unlabelled ones whose one term is its segment", () => {
  const all = [
    pv("labelled", {}),
    pv("upstream", { labelled: false }),
    pv("other-node", { node: "live" }),
    pv("other-node-unlabelled", { node: "live", labelled: false }),
    pv("other-driver", { driver: "x.csi" }),
  ];
  const found = lostNodeVolumes(all, {
    driverName: DRIVER,
    node: "lost",
    segment: { [KEY]: "lost" },
  });
  deepStrictEqual(found.map((v) => v.metadata.name), ["labelled", "upstream"]);
  const noSegment = lostNodeVolumes(all, { driverName: DRIVER, node: "lost", segment: undefined });
  deepStrictEqual(noSegment.map((v) => v.metadata.name), ["labelled"]);
});

Deno.test("lostVolumeAction: Released Delete released, Retain and Bound reported, claims only with the opt-in", () => {
  const optIn = optInClass("opt-in", DRIVER);
  const classOf = (name: string) => name === "opt-in" ? optIn : undefined;
  const kind = (v: PersistentVolume) => lostVolumeAction(v, classOf).kind;
  deepStrictEqual(
    [
      pv("a", { phase: "Released" }),
      pv("b", { phase: "Released", policy: "Retain" }),
      pv("c", {}),
      pv("d", { phase: "Available" }),
      pv("e", { phase: "Released", className: "opt-in" }),
    ].map(kind),
    ["release", "report", "report", "none", "release"],
  );
  deepStrictEqual(lostVolumeAction(pv("f", { className: "opt-in" }), classOf), {
    kind: "deleteClaim",
    claim: { namespace: "ns", name: "claim-f", uid: "cuid-f" },
  });
});
