/* The reed-switch controller of the double-acting cylinder circuit as an FMI 2.0
 * Co-Simulation FMU, for importers that couple two FMUs (OMSimulator through an SSP): the
 * same cycle as ../controller.py. Input `x` (the piston's position), output `position` (the
 * 5/2 valve's spool), parameters `start`, `dwell`, `sensor`, `stroke`. The output depends on
 * the input at the same instant (direct feedthrough, declared in ModelStructure): at a
 * communication point t the master reads x(t), the controller decides, and the valve takes
 * the decision for the step from t, as the FMPy master does. fmi2DoStep commits the decision
 * taken at its communication point.
 *
 * Self-contained (the FMI 2.0 types are declared here); built by test_omsimulator.py:
 *     gcc -shared -fPIC -O2 -o reed_controller.so controller.c -lm
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated } fmi2StatusKind;
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String,
                                   fmi2String, ...);
typedef struct {
    fmi2CallbackLogger logger;
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(fmi2ComponentEnvironment, fmi2Status);
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

#define EXPORT __attribute__((visibility("default")))

enum { VR_X, VR_POSITION, VR_START, VR_DWELL, VR_SENSOR, VR_STROKE, N_VR };
enum { REST, EXTEND, RETRACT };

typedef struct {
    double v[N_VR];
    int phase;
    double since; /* when the reed switch of the current stroke first saw the piston; NAN: not */
    double time;
} Controller;

/* The decision at time t with the piston at x: the phase and timer it leads to. */
static void decide(const Controller *c, double t, int *phase, double *since) {
    int want = c->phase;
    double s = c->since;
    if (c->phase == REST && t >= c->v[VR_START] - 1e-12) {
        want = EXTEND;
    } else if (c->phase != REST) {
        double x = c->v[VR_X];
        int seen = c->phase == EXTEND ? x >= c->v[VR_STROKE] - c->v[VR_SENSOR] : x <= c->v[VR_SENSOR];
        s = seen ? (isnan(s) ? t : s) : NAN;
        if (!isnan(s) && t - s >= c->v[VR_DWELL] - 1e-12) want = c->phase == EXTEND ? RETRACT : EXTEND;
    }
    if (want != c->phase) s = NAN;
    *phase = want;
    *since = s;
}

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[]) {
    (void)c; (void)on; (void)n; (void)cats;
    return fmi2OK;
}

EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String location,
                                     const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    (void)name; (void)guid; (void)location; (void)cb; (void)visible; (void)logging;
    if (type != fmi2CoSimulation) return NULL;
    Controller *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->v[VR_START] = 0.05;
    c->v[VR_DWELL] = 0.15;
    c->v[VR_SENSOR] = 1e-3;
    c->v[VR_STROKE] = 0.1;
    c->phase = REST;
    c->since = NAN;
    return c;
}

EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }
EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real start,
                                      fmi2Boolean stop_defined, fmi2Real stop) {
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    ((Controller *)c)->time = start;
    return fmi2OK;
}
EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
    Controller *k = c;
    k->phase = REST;
    k->since = NAN;
    k->time = 0.0;
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[]) {
    Controller *k = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_VR) return fmi2Error;
        if (vr[i] == VR_POSITION) {
            int phase;
            double since;
            decide(k, k->time, &phase, &since);
            value[i] = phase == EXTEND ? 1.0 : 0.0;
        } else {
            value[i] = k->v[vr[i]];
        }
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real value[]) {
    Controller *k = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_VR || vr[i] == VR_POSITION || !isfinite(value[i])) return fmi2Error;
        k->v[vr[i]] = value[i];
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_prior) {
    Controller *k = c;
    (void)no_prior;
    if (!(h > 0.0)) return fmi2Error;
    decide(k, t, &k->phase, &k->since);
    k->time = t + h;
    return fmi2OK;
}

/* What this FMU does not have: no integers, booleans, strings, states or derivatives. */
#define UNSUPPORTED(decl) EXPORT fmi2Status decl { return fmi2Error; }
EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}
EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}
EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}
UNSUPPORTED(fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s))
UNSUPPORTED(fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s))
UNSUPPORTED(fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s))
UNSUPPORTED(fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n))
UNSUPPORTED(fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n))
UNSUPPORTED(fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s))
UNSUPPORTED(fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                         const fmi2ValueReference z[], size_t nz, const fmi2Real dv[], fmi2Real dz[]))
UNSUPPORTED(fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], const fmi2Real v[]))
UNSUPPORTED(fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                         const fmi2Integer order[], fmi2Real v[]))
UNSUPPORTED(fmi2CancelStep(fmi2Component c))
UNSUPPORTED(fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v))
UNSUPPORTED(fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v))
UNSUPPORTED(fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v))
UNSUPPORTED(fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v))
UNSUPPORTED(fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v))
