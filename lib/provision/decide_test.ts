import { deepStrictEqual } from "node:assert/strict";
import type { Claim, StorageClass } from "../model/objects.ts";
import { type ClaimDecision, decideClaim, screenClaim } from "./decide.ts";
import {
  ANN_BETA_STORAGE_PROVISIONER as BETA_PROVISIONER,
  ANN_SELECTED_NODE as SELECTED,
  ANN_STORAGE_PROVISIONER as PROVISIONER,
} from "../model/keys.ts";
import {
  claim,
  claimDecisionOptions,
  DRIVER,
  NODE,
  storageClass,
} from "../../tests/builders/provision.ts";

const OPTIONS = claimDecisionOptions();

function withAnnotations(
  annotations: Record<string, string>,
  spec: Partial<Claim["spec"]> = {},
): Claim {
  return claim({ metadata: { annotations }, spec });
}

/** `null` stands for a class missing from the cache. */
function decide(
  theClaim: Claim,
  theClass: StorageClass | null = storageClass(),
  options = OPTIONS,
) {
  return decideClaim({ claim: theClaim, storageClass: theClass ?? undefined }, options);
}

function ignored(cause: string, reason: string): ClaimDecision {
  return { kind: "ignore", cause, reason } as ClaimDecision;
}

Deno.test("decideClaim() provisions a claim selected to this node", () => {
  deepStrictEqual(decide(claim()), { kind: "provision", storageClass: storageClass() });
});

Deno.test("decideClaim() provisions an Immediate claim once this node owns it", () => {
  const immediate = storageClass({ volumeBindingMode: "Immediate" });
  deepStrictEqual(decide(claim(), immediate), { kind: "provision", storageClass: immediate });
});

Deno.test("decideClaim() ignores a claim that is already bound", () => {
  deepStrictEqual(
    decide(claim({ spec: { volumeName: "pv-1" } })),
    ignored("bound", 'claim apps/data is already bound to volume "pv-1"'),
  );
});

Deno.test("decideClaim() ignores a claim that is being deleted", () => {
  deepStrictEqual(
    decide(claim({ metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } })),
    ignored("deleting", "claim apps/data is being deleted"),
  );
});

Deno.test("decideClaim() ignores claims of another provisioner with upstream's reason", () => {
  deepStrictEqual(
    decide(withAnnotations({ [PROVISIONER]: "other.csi.example.com", [SELECTED]: NODE })),
    ignored(
      "otherProvisioner",
      `PVC annotated with external-provisioner name other.csi.example.com does not match provisioner driver name ${DRIVER}. This could mean the PVC is not migrated`,
    ),
  );
  deepStrictEqual(
    decide(withAnnotations({})),
    ignored(
      "otherProvisioner",
      `PVC annotated with external-provisioner name  does not match provisioner driver name ${DRIVER}. This could mean the PVC is not migrated`,
    ),
  );
});

const UNNAMED = withAnnotations({ [SELECTED]: NODE });

Deno.test("decideClaim() provisions a WaitForFirstConsumer claim selected to this node before the PV controller names a provisioner", () => {
  deepStrictEqual(decide(UNNAMED), { kind: "provision", storageClass: storageClass() });
  deepStrictEqual(screenClaim(UNNAMED, OPTIONS), {
    kind: "lookUpClass",
    storageClassName: "fast",
    named: false,
  });
});

Deno.test("decideClaim() leaves a claim without a named provisioner to the PV controller, silently, unless its class is a WaitForFirstConsumer one of our driver", () => {
  const notNamed = "the PV controller has not named a provisioner on the claim yet";
  deepStrictEqual(
    decide(UNNAMED, null),
    ignored("classMissing", `${notNamed}, and its class is not in the cache`),
  );
  deepStrictEqual(
    decide(UNNAMED, storageClass({ provisioner: "other.csi.example.com" })),
    ignored(
      "otherProvisioner",
      `${notNamed}, and its class names provisioner "other.csi.example.com"`,
    ),
  );
  deepStrictEqual(
    decide(UNNAMED, storageClass({ volumeBindingMode: "Immediate" })),
    ignored("notNamed", `${notNamed}, and its class binds Immediate`),
  );
  deepStrictEqual(
    decide(withAnnotations({ [SELECTED]: "node-b" })).kind,
    "ignore",
  );
  // An empty annotation names a provisioner: "" (as upstream reads it).
  deepStrictEqual(decide(withAnnotations({ [PROVISIONER]: "", [SELECTED]: NODE })).kind, "ignore");
});

Deno.test("decideClaim() reads the beta provisioner annotation only when the new one is absent", () => {
  deepStrictEqual(
    decide(withAnnotations({ [BETA_PROVISIONER]: DRIVER, [SELECTED]: NODE })).kind,
    "provision",
  );
  deepStrictEqual(
    decide(withAnnotations({ [PROVISIONER]: "", [BETA_PROVISIONER]: DRIVER, [SELECTED]: NODE }))
      .kind,
    "ignore",
  );
});

Deno.test("decideClaim() accepts a claim migrated to our driver", () => {
  const migrated = withAnnotations({
    [PROVISIONER]: "kubernetes.io/in-tree",
    "pv.kubernetes.io/migrated-to": DRIVER,
    [SELECTED]: NODE,
  });
  deepStrictEqual(decide(migrated).kind, "provision");
});

Deno.test("screenClaim() ignores a claim selected to another node without any lookup", () => {
  deepStrictEqual(
    screenClaim(withAnnotations({ [PROVISIONER]: DRIVER, [SELECTED]: "node-b" }), OPTIONS),
    ignored(
      "otherNode",
      'not responsible for provisioning of PVC apps/data because it is not assigned to node "node-a"',
    ),
  );
});

Deno.test("screenClaim() names the class to look up, the beta annotation winning", () => {
  deepStrictEqual(screenClaim(claim(), OPTIONS), {
    kind: "lookUpClass",
    storageClassName: "fast",
    named: true,
  });
  deepStrictEqual(
    screenClaim(
      withAnnotations(
        { [PROVISIONER]: DRIVER, "volume.beta.kubernetes.io/storage-class": "legacy" },
        { storageClassName: "fast" },
      ),
      OPTIONS,
    ),
    { kind: "lookUpClass", storageClassName: "legacy", named: true },
  );
});

Deno.test("decideClaim() copes with a claim that has only the beta class annotation (upstream's checkNode panics on it)", () => {
  const { storageClassName: _, ...spec } = claim().spec;
  const legacy: Claim = {
    metadata: {
      ...claim().metadata,
      annotations: { [PROVISIONER]: DRIVER, "volume.beta.kubernetes.io/storage-class": "legacy" },
    },
    spec,
  };
  deepStrictEqual(screenClaim(legacy, OPTIONS), {
    kind: "lookUpClass",
    storageClassName: "legacy",
    named: true,
  });
  deepStrictEqual(
    decide(legacy, storageClass({ metadata: { name: "legacy", uid: "u", resourceVersion: "1" } })),
    ignored(
      "waitingForScheduler",
      "WaitForFirstConsumer: waiting for the scheduler to select a node",
    ),
  );
});

Deno.test("decideClaim() reports a missing class of a claim selected to this node", () => {
  deepStrictEqual(decide(claim(), null), {
    kind: "problem",
    reason: "ProvisioningFailed",
    message:
      'storageClass "fast" not found (PersistentVolumeClaim "apps/data", spec.storageClassName)',
    retry: "backoff",
    state: "noChange",
  });
  const annotated = withAnnotations({
    [PROVISIONER]: DRIVER,
    [SELECTED]: NODE,
    "volume.beta.kubernetes.io/storage-class": "legacy",
  });
  deepStrictEqual(decide(annotated, null), {
    kind: "problem",
    reason: "ProvisioningFailed",
    message: 'storageClass "legacy" not found (PersistentVolumeClaim "apps/data", ' +
      'metadata.annotations["volume.beta.kubernetes.io/storage-class"])',
    retry: "backoff",
    state: "noChange",
  });
});

Deno.test("decideClaim() reports a class of another provisioner for a claim selected to this node", () => {
  deepStrictEqual(decide(claim(), storageClass({ provisioner: "other.csi.example.com" })), {
    kind: "problem",
    reason: "ProvisioningFailed",
    message:
      `Unknown provisioner requested in claim's StorageClass: "other.csi.example.com" is not "${DRIVER}" ` +
      '(StorageClass "fast", provisioner)',
    retry: "backoff",
    state: "finished",
  });
});

const UNSELECTED = withAnnotations({ [PROVISIONER]: DRIVER });

Deno.test("decideClaim() leaves WaitForFirstConsumer claims to the scheduler", () => {
  deepStrictEqual(
    decide(UNSELECTED),
    ignored(
      "waitingForScheduler",
      "WaitForFirstConsumer: waiting for the scheduler to select a node",
    ),
  );
  deepStrictEqual(
    decide(withAnnotations({ [PROVISIONER]: DRIVER, [SELECTED]: "" })).kind,
    "ignore",
  );
});

Deno.test("decideClaim() hands Immediate claims without a node to the (later) ownership race", () => {
  const immediate = storageClass({ volumeBindingMode: "Immediate" });
  deepStrictEqual(decide(UNSELECTED, immediate), {
    kind: "immediateBinding",
    reason: "Immediate binding and no node selected: racing to own the claim",
    storageClass: immediate,
  });
  const { volumeBindingMode: _, ...unset } = storageClass();
  deepStrictEqual(
    decide(UNSELECTED, unset).kind,
    "immediateBinding",
    "an absent mode is Immediate",
  );
});

Deno.test("decideClaim() ignores Immediate claims with --node-deployment-immediate-binding=false", () => {
  deepStrictEqual(
    decide(UNSELECTED, storageClass({ volumeBindingMode: "Immediate" }), {
      ...OPTIONS,
      immediateBinding: false,
    }),
    ignored(
      "immediateBindingDisabled",
      "Immediate binding is disabled by --node-deployment-immediate-binding=false",
    ),
  );
});

Deno.test("decideClaim() stays quiet about a missing or foreign class while no node is selected", () => {
  deepStrictEqual(
    decide(UNSELECTED, null),
    ignored("classMissing", 'storageClass "fast" not found'),
  );
  deepStrictEqual(
    decide(UNSELECTED, storageClass({ provisioner: "other" })),
    ignored(
      "otherProvisioner",
      `Unknown provisioner requested in claim's StorageClass: "other" is not "${DRIVER}"`,
    ),
  );
});
