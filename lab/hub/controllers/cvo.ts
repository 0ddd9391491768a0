/**
 * The hosted cluster's cluster-version operator, as far as the simulator plays it: the guest
 * ClusterVersion `version` (desired, history, Available/Progressing/Failing) and the conditions the
 * HyperShift operator copies from it onto the HostedCluster (ClusterVersionSucceeding, Available,
 * Progressing). During an update the CVO stays Available on the previous version; with the fault
 * `controlPlaneUpdateStuck` it cannot get past a degraded cluster operator (kube-apiserver), so the update
 * never completes and Failing/ClusterVersionSucceeding say why.
 */
import type { GuestApi } from './context.js';
import { T, arr, get, patchStatus, rec, type Cond } from './util.js';

/** The cluster operator the stuck update waits on, and how the CVO words it. */
const STUCK_OPERATOR = 'kube-apiserver';
const STUCK_REASON = 'ClusterOperatorDegraded';
const STUCK_MESSAGE = `Cluster operator ${STUCK_OPERATOR} is degraded`;

export interface CvoView {
  image: string;
  version: string;
  /** The version the CVO last completed, during an update. */
  previous?: string;
  completed: boolean;
  /** The update is stuck on a degraded cluster operator. */
  stuck: boolean;
}

interface CvoCond {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Available, Progressing and Failing of the hosted ClusterVersion. */
function cvo(v: CvoView): { available: CvoCond; progressing: CvoCond; failing: CvoCond } {
  const ok: CvoCond = { status: 'False', reason: '', message: '' };
  if (v.completed) {
    return {
      available: { status: 'True', reason: '', message: `Done applying ${v.version}` },
      progressing: { status: 'False', reason: '', message: `Cluster version is ${v.version}` },
      failing: ok,
    };
  }
  if (v.previous !== undefined) {
    const available: CvoCond = { status: 'True', reason: '', message: `Done applying ${v.previous}` };
    return v.stuck
      ? {
          available,
          progressing: {
            status: 'True',
            reason: STUCK_REASON,
            message: `Unable to apply ${v.version}: the cluster operator ${STUCK_OPERATOR} is degraded`,
          },
          failing: { status: 'True', reason: STUCK_REASON, message: STUCK_MESSAGE },
        }
      : {
          available,
          progressing: {
            status: 'True',
            reason: '',
            message: `Working towards ${v.version}: 712 of 890 done (80% complete)`,
          },
          failing: ok,
        };
  }
  return {
    available: { status: 'False', reason: '', message: '' },
    progressing: { status: 'True', reason: '', message: `Working towards ${v.version}` },
    failing: ok,
  };
}

/** The HostedCluster's ClusterVersionSucceeding, ClusterVersionAvailable and ClusterVersionProgressing. */
export function clusterVersionConditions(v: CvoView): Cond[] {
  const { progressing, failing } = cvo(v);
  const installing = !v.completed && v.previous === undefined;
  return [
    failing.status === 'True'
      ? {
          type: 'ClusterVersionSucceeding',
          status: 'False',
          reason: failing.reason,
          message: failing.message,
        }
      : { type: 'ClusterVersionSucceeding', status: 'True', reason: 'AsExpected', message: '' },
    installing
      ? {
          type: 'ClusterVersionAvailable',
          status: 'False',
          reason: 'FromClusterVersion',
          message: `Working towards ${v.version}: waiting on worker nodes to join (cluster operators console, ingress are not available)`,
        }
      : {
          type: 'ClusterVersionAvailable',
          status: 'True',
          reason: 'FromClusterVersion',
          message: `Done applying ${v.completed ? v.version : v.previous}`,
        },
    installing
      ? {
          type: 'ClusterVersionProgressing',
          status: 'True',
          reason: 'FromClusterVersion',
          message: `Unable to apply ${v.version}: the cluster operator console has not yet successfully rolled out`,
        }
      : {
          type: 'ClusterVersionProgressing',
          status: progressing.status,
          reason: progressing.reason || 'FromClusterVersion',
          message: progressing.message,
        },
  ];
}

/** The guest ClusterVersion: desired, its history (a new Partial entry per image) and conditions. */
export function syncGuestClusterVersion(guest: GuestApi, v: CvoView, now: string): void {
  const cv = get(guest.store, T.clusterVersion, 'version');
  if (!cv) return;
  const { image, version, completed } = v;
  const history = arr(rec(cv.status).history).map(rec);
  const head = history[0];
  const entry =
    head && head.image === image
      ? {
          ...head,
          state: completed ? 'Completed' : 'Partial',
          completionTime: completed ? (head.completionTime ?? now) : null,
        }
      : {
          state: completed ? 'Completed' : 'Partial',
          version,
          image,
          startedTime: now,
          completionTime: completed ? now : null,
          verified: false,
        };
  const next = head && head.image === image ? [entry, ...history.slice(1)] : [entry, ...history];
  const state = cvo(v);
  const prevConds = arr(rec(cv.status).conditions).map(rec);
  const conditions = (
    [
      ['Available', state.available],
      ['Failing', state.failing],
      ['Progressing', state.progressing],
    ] as const
  ).map(([type, c]) => {
    const prev = prevConds.find((p) => p.type === type);
    const same = prev?.status === c.status && prev.message === c.message && (prev.reason ?? '') === c.reason;
    return same
      ? prev
      : {
          type,
          status: c.status,
          ...(c.reason ? { reason: c.reason } : {}),
          message: c.message,
          lastTransitionTime: prev?.status === c.status ? prev.lastTransitionTime : now,
        };
  });
  patchStatus(guest.store, cv, { desired: { image, version }, history: next, conditions });
}
