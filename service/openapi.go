package service

func (s *Service) documentRoutes() []route {
	return []route{}
}
