import { NAME, PATH } from './phrases';
import { always, type Intent } from './intent';
import { deleteFiles, dirSize, freeSpaceIn, grepFile, largestFiles, listDir, showFile, tailFile } from './file-steps';
import { installPackage, packageInstalled, removePackage, updatePackages, upgradable } from './package-steps';
import { serviceActive, serviceErrors, serviceIntent, serviceLogs, serviceStatus } from './service-steps';
import { checkUrl, killProcess, pingHost, portOwner, processesNamed, processUsage, reboot, resolveHost, topCpu, topMemory } from './system-steps';

/* The built-in planner's catalogue: what each kind of request looks like, and the step it becomes (built in file-, service-, package- and system-steps.ts). */

/** "memory usage of the server" is the whole server's, not a process named "server". */
const NOT_THE_SERVER = '(?!(?:the|server|machine|host|box|system|it|all|everything|processes|process|this|that|them)\\b)';

/** The catalogue, most specific first: the first intent whose pattern matches a clause plans it. */
export const INTENTS: Intent[] = [
  {
    id: 'reboot', label: 'reboot the server', risk: 'destructive',
    pattern: /\b(?:reboot|restart)\s+(?:the\s+)?(?:server|machine|host|box|system)\b|^\s*reboot\b/i,
    build: reboot,
  },
  {
    // Recognised so that it is refused as what it is (destructive, unless the organization allows
    // destructive commands), never planned as something else or reported as not understood.
    id: 'delete_files', label: 'delete files or a directory (destructive)', risk: 'destructive',
    pattern: new RegExp(`\\b(?:delete|remove|rm|wipe|erase|empty|clear|purge)\\s+(?:(everything|all(?:\\s+the)?(?:\\s+files)?|the\\s+(?:contents|files)|files|the\\s+directory|the\\s+folder)\\s+(?:in|under|inside|from|of)\\s+)?(?:the\\s+)?(?:file\\s+|directory\\s+|folder\\s+)?${PATH}`, 'i'),
    build: deleteFiles,
  },
  {
    id: 'port_owner', label: 'who is on port N', risk: 'read',
    pattern: /\bport\s+(\d{1,5})\b/i,
    build: portOwner,
  },
  {
    id: 'listening_ports', label: 'listening ports', risk: 'read',
    pattern: /\b(?:listening|open)\s+ports\b|\bwhat(?:'s| is)\s+listening\b|\bports?\s+(?:in use|open)\b/i,
    build: always('Listening ports', 'ss -tulpn'),
  },
  {
    id: 'failed_services', label: 'failed services', risk: 'read',
    pattern: /\bfailed\s+(?:services|units)\b|\bwhich\s+services\s+(?:have\s+)?failed\b/i,
    build: always('Failed services', 'systemctl --failed --no-pager'),
  },
  {
    id: 'tail_file', label: 'tail a log file', risk: 'read',
    pattern: new RegExp(`\\b(?:tail(?:\\s+-n)?(?:\\s+(\\d+))?(?:\\s+lines\\s+(?:of|from))?|(?:last|final)\\s+(\\d+)\\s+lines\\s+(?:of|from|in)|end\\s+of)\\s+(?:the\\s+)?(?:log\\s+)?(?:file\\s+)?${PATH}`, 'i'),
    build: tailFile,
  },
  {
    id: 'grep_file', label: 'search a file for a word', risk: 'read',
    pattern: new RegExp(`\\b(?:grep|search|look)\\s+(?:for\\s+)?(?:"([^"]+)"|'([^']+)'|(\\S+))\\s+in\\s+(?:the\\s+)?(?:file\\s+)?${PATH}`, 'i'),
    build: grepFile,
  },
  {
    id: 'service_errors', label: 'recent errors (of a service)', risk: 'read',
    pattern: /\berrors?\b(?:\s+(?:of|for|from|in)\s+(?:the\s+)?([a-z0-9][a-z0-9@._-]*))?/i,
    build: serviceErrors,
  },
  {
    id: 'service_logs', label: 'logs of a service', risk: 'read',
    pattern: /\b(?:logs?|journal)\s+(?:of|for|from)\s+(?:the\s+)?([a-z0-9][a-z0-9@._-]*)|\b([a-z0-9][a-z0-9@._-]*)\s+logs?\b|\b(?:its|their)\s+logs?\b/i,
    build: serviceLogs,
  },
  {
    id: 'largest_files', label: 'largest files in a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:largest|biggest)\\s+(?:\\d{1,6}\\s+)?(?:files|directories|folders)(?:\\s+(?:in|under)\\s+${PATH})?`, 'i'),
    build: largestFiles,
  },
  {
    id: 'dir_size', label: 'size of a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:size\\s+of|how\\s+big\\s+is|disk\\s+usage\\s+of|space\\s+used\\s+by)\\s+(?:the\\s+)?(?:directory\\s+|folder\\s+)?${PATH}`, 'i'),
    build: dirSize,
  },
  {
    id: 'free_space_in', label: 'free space in a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:free|available|left)\\s+(?:disk\\s+)?space\\s+(?:in|on|of|for|at)\\s+${PATH}`, 'i'),
    build: freeSpaceIn,
  },
  {
    id: 'disk_usage', label: 'disk usage', risk: 'read',
    pattern: /\b(?:disk|disks|storage|filesystems?)\b|\bfree\s+space\b|\bhow\s+full\b|\bdf\b/i,
    build: always('Disk usage', 'df -h -x tmpfs -x devtmpfs'),
  },
  {
    // Before the other memory/CPU intents: "memory usage of nginx" is about nginx, not the whole server.
    id: 'process_usage', label: 'memory and CPU of a named process', risk: 'read',
    pattern: new RegExp(
      `\\b(?:memory|ram|cpu)\\s+(?:usage\\s+|use\\s+|used\\s+)?(?:of|by|for)\\s+(?:the\\s+)?(?:process(?:es)?\\s+|service\\s+)?${NOT_THE_SERVER}${NAME}|\\bhow\\s+much\\s+(?:memory|ram|cpu)\\s+(?:does|do|is)\\s+(?:the\\s+)?${NOT_THE_SERVER}${NAME}\\s+(?:use|using|take|taking)\\b`,
      'i',
    ),
    build: processUsage,
  },
  {
    id: 'top_memory', label: 'processes using the most memory', risk: 'read',
    pattern: /\b(?:processes?|what)\b.*\b(?:memory|ram)\b|\b(?:memory|ram)\s+hogs?\b/i,
    build: topMemory,
  },
  {
    id: 'memory', label: 'memory usage', risk: 'read',
    pattern: /\b(?:memory|ram|swap)\b/i,
    build: always('Memory usage', 'free -h'),
  },
  {
    id: 'top_cpu', label: 'top processes', risk: 'read',
    pattern: /\b(?:top|busiest|heaviest)\s+(?:\d{1,6}\s+)?processes\b|\bprocesses?\b.*\bcpu\b|\busing\s+(?:the\s+)?(?:most\s+)?cpu\b|\bcpu\s+hogs?\b/i,
    build: topCpu,
  },
  {
    id: 'cpu_info', label: 'CPU details', risk: 'read',
    pattern: /\bcpus?\b|\bcores?\b|\bprocessors?\b/i,
    build: always('CPU details', 'lscpu'),
  },
  {
    id: 'uptime', label: 'uptime and load', risk: 'read',
    pattern: /\buptime\b|\bload(?:\s+average)?\b|\bhow\s+long\b.*\bup\b|\bbeen\s+up\b/i,
    build: always('Uptime and load', 'uptime'),
  },
  {
    id: 'check_url', label: 'check a URL', risk: 'read',
    pattern: /\b(https?:\/\/[^\s,;"'`]+)/i,
    build: checkUrl,
  },
  {
    id: 'package_installed', label: 'is a package installed', risk: 'read',
    pattern: new RegExp(`\\bis\\s+(?:the\\s+)?(?:package\\s+)?${NAME}\\s+installed\\b`, 'i'),
    build: packageInstalled,
  },
  {
    id: 'upgradable', label: 'pending package updates', risk: 'read',
    pattern: /\b(?:pending|available|list|show|which)\b.*\b(?:updates|upgrades|upgradable|upgradeable)\b|\bupgradable\b/i,
    build: upgradable,
  },
  {
    id: 'update_packages', label: 'update all packages', risk: 'change',
    pattern: /\b(?:update|upgrade|patch)\s+(?:all\s+)?(?:the\s+)?(?:system|packages|os|server|everything)\b/i,
    build: updatePackages,
  },
  {
    id: 'install_package', label: 'install a package', risk: 'change',
    pattern: new RegExp(`\\binstall\\s+(?:the\\s+)?(?:package\\s+)?${NAME}`, 'i'),
    build: installPackage,
  },
  {
    id: 'remove_package', label: 'remove a package', risk: 'change',
    pattern: new RegExp(`\\b(?:uninstall|remove)\\s+(?:the\\s+)?(?:package\\s+)?${NAME}`, 'i'),
    build: removePackage,
  },
  serviceIntent('restart', 'restart|bounce'),
  serviceIntent('reload', 'reload'),
  serviceIntent('start', 'start'),
  serviceIntent('stop', 'stop'),
  serviceIntent('enable', 'enable'),
  serviceIntent('disable', 'disable'),
  {
    id: 'service_active', label: 'check that a service runs', risk: 'read',
    pattern: new RegExp(`\\b(?:check|verify|confirm|make\\s+sure|ensure)\\s+(?:that\\s+)?(?:the\\s+)?(?:service\\s+)?${NAME}\\s+(?:service\\s+)?(?:is\\s+)?(?:running|runs|up|active|alive|started)\\b`, 'i'),
    build: serviceActive,
  },
  {
    id: 'service_running', label: 'is a process running', risk: 'read',
    pattern: new RegExp(`\\b(?:is|are)\\s+${NAME}\\s+(?:running|up|alive)\\b|\\bprocesses\\s+(?:named|called|matching)\\s+${NAME}`, 'i'),
    build: processesNamed,
  },
  {
    id: 'service_status', label: 'status of a service', risk: 'read',
    pattern: new RegExp(`\\bstatus\\s+of\\s+(?:the\\s+)?(?:service\\s+)?${NAME}|\\b(?!(?:the|its|their|a|an|show|check|get|what)\\b)${NAME}\\s+status\\b|\\b(?:its|their)\\s+status\\b|\\bstatus\\b`, 'i'),
    build: serviceStatus,
  },
  {
    id: 'kill_process', label: 'stop a process by PID', risk: 'change',
    pattern: /\bkill\s+(?:process\s+)?(?:pid\s+)?(\d{2,10})\b/i,
    build: killProcess,
  },
  {
    id: 'show_file', label: 'show a file', risk: 'read',
    pattern: new RegExp(`\\b(?:show|cat|print|display|read|open|contents\\s+of)\\s+(?:me\\s+)?(?:the\\s+)?(?:contents\\s+of\\s+)?(?:the\\s+)?(?:file\\s+)?${PATH}`, 'i'),
    build: showFile,
  },
  {
    id: 'list_dir', label: 'list a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:list|ls)\\s+(?:the\\s+)?(?:files\\s+in\\s+|directory\\s+|folder\\s+)?${PATH}`, 'i'),
    build: listDir,
  },
  {
    id: 'os_version', label: 'OS version', risk: 'read',
    pattern: /\b(?:os|operating\s+system|distribution|distro|release)\b/i,
    build: always('Operating system', 'cat /etc/os-release'),
  },
  {
    id: 'kernel', label: 'kernel version', risk: 'read',
    pattern: /\bkernel\b/i,
    build: always('Kernel', 'uname -a'),
  },
  {
    id: 'logged_in', label: 'who is logged in', risk: 'read',
    pattern: /\bwho\s+is\s+(?:logged\s+in|on)\b|\blogged[-\s]in\s+users\b|\bwho(?:'s)?\s+logged\b|\bsessions\b/i,
    build: always('Logged-in users', 'who'),
  },
  {
    id: 'hostname', label: 'hostname', risk: 'read',
    pattern: /\bhostname\b|\bhost\s+name\b/i,
    build: always('Hostname', 'hostname'),
  },
  {
    id: 'server_time', label: 'time on the server', risk: 'read',
    pattern: /\b(?:date|time|clock|timezone)\b/i,
    build: always('Time on the server', 'date; date -u'),
  },
  {
    id: 'ip_addresses', label: 'IP addresses', risk: 'read',
    pattern: /\bip\s+(?:address(?:es)?|addrs?)\b|\bnetwork\s+interfaces\b|\binterfaces\b/i,
    build: always('IP addresses', 'ip -brief address'),
  },
  {
    id: 'routes', label: 'routing table', risk: 'read',
    pattern: /\broutes?\b|\brouting\s+table\b|\bdefault\s+gateway\b/i,
    build: always('Routing table', 'ip route'),
  },
  {
    id: 'resolve', label: 'resolve a host name', risk: 'read',
    pattern: /\b(?:resolve|dns\s+(?:lookup\s+)?(?:for|of)|look\s*up)\s+([a-z0-9][a-z0-9.-]*\.[a-z]{2,})\b/i,
    build: resolveHost,
  },
  {
    id: 'ping', label: 'ping a host', risk: 'read',
    pattern: /\bping\s+([a-z0-9][a-z0-9.:-]*)\b/i,
    build: pingHost,
  },
  {
    id: 'containers', label: 'running containers', risk: 'read',
    pattern: /\bcontainers?\b|\bdocker\s+ps\b/i,
    build: always('Containers', 'docker ps --all'),
  },
  {
    id: 'cron', label: 'cron jobs', risk: 'read',
    pattern: /\bcron(?:tab)?\b|\bscheduled\s+jobs\b/i,
    build: always('Cron jobs', "crontab -l 2>/dev/null || echo 'no crontab for this user'; ls /etc/cron.d"),
  },
];
