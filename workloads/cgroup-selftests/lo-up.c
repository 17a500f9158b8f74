/*
 * lo-up: bring the loopback interface up.  test_memcontrol's
 * test_memcg_sock talks TCP to localhost, and the guest's PID 1 (the agent)
 * configures no network; the image has no ip(8) or ifconfig(8).
 * Built statically on the host by prepare, onto the test disk.
 */
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0) {
		perror("lo-up: socket");
		return 1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		perror("lo-up: SIOCGIFFLAGS lo");
		return 1;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
		perror("lo-up: SIOCSIFFLAGS lo");
		return 1;
	}
	close(fd);
	return 0;
}
